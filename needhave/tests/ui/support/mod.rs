//! What the fixtures' tables refer to: a few types and handlers of the usual
//! shapes. Each fixture also brings `api`, `error`, `http`, `json`, `platform` and
//! `Ctx` into its crate root, where the expansion of `routes!` looks for them.

#![allow(dead_code)]

use needhave::error::ApiError;
use needhave::http::{Html, Id, Request, Response};
use needhave::Ctx;

#[derive(needhave_macros::ToJson, schemars::JsonSchema)]
pub struct Post {
    pub id: String,
    pub note: String,
}

#[derive(needhave_macros::ToJson, schemars::JsonSchema)]
pub struct PostList {
    pub posts: Vec<Post>,
}

#[derive(needhave_macros::FromBody, schemars::JsonSchema)]
pub struct NewPost {
    pub note: String,
}

#[derive(needhave_macros::FromBody, schemars::JsonSchema)]
pub struct Secret {
    pub secret: String,
}

pub mod posts {
    use super::*;

    pub async fn list(_ctx: &Ctx) -> Result<PostList, ApiError> {
        todo!()
    }

    pub async fn read(_ctx: &Ctx, _id: Id) -> Result<Post, ApiError> {
        todo!()
    }

    pub async fn create(_ctx: &Ctx, _body: NewPost) -> Result<Post, ApiError> {
        todo!()
    }

    pub async fn reply(_ctx: &Ctx, _id: Id, _body: NewPost) -> Result<Post, ApiError> {
        todo!()
    }

    pub async fn waiting(_ctx: &Ctx, _id: Id, _body: Secret) -> Result<PostList, ApiError> {
        todo!()
    }
}

pub mod site {
    use super::*;

    pub async fn home(_req: &Request, _ctx: &Ctx) -> Response {
        todo!()
    }

    pub async fn about(_ctx: &Ctx) -> Result<Html, ApiError> {
        todo!()
    }
}
