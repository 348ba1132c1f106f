//! `GET /healthz`: whether this instance can serve, for a load balancer, a
//! service manager or an orchestrator's probe.

use needhave_macros::ToJson;

use crate::api::Ctx;
use crate::error::{ApiError, Code};
use crate::store::{prepare, StoreExt};

#[derive(ToJson)]
#[cfg_attr(
    not(target_arch = "wasm32"),
    derive(serde::Serialize, schemars::JsonSchema)
)]
pub struct Health {
    /// Always `ok`: an instance that cannot serve answers 503 instead.
    pub status: String,
}

/// One statement that touches no table: the cheapest round trip that still
/// proves the store answers. Any failure is `unavailable` (503), which tells
/// a balancer to send traffic elsewhere; the store's own message goes to the
/// log.
pub async fn check(ctx: &Ctx) -> Result<Health, ApiError> {
    match ctx.store.first(prepare("SELECT 1 AS up")).await {
        Ok(_) => Ok(Health {
            status: "ok".to_string(),
        }),
        Err(e) => {
            // Logged as any store failure is; the answer is 503 either way.
            let _ = ApiError::from(e);
            Err(Code::Unavailable.into())
        }
    }
}
