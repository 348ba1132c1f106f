//! What a person or a crawler reads: the home page and the OpenAPI document.

pub mod home;
pub mod openapi;
