//! `GET /healthz`: whether this instance can serve, for a load balancer, a
//! service manager or an orchestrator's probe.

use needhave_macros::{schema, ToJson};

use crate::api::Ctx;
use crate::error::{ApiError, Code};
use crate::store::{prepare, StoreExt};

#[schema(serialize)]
#[derive(ToJson)]
pub struct Health {
    /// Always `ok`: an instance that cannot serve answers 503 instead.
    pub status: String,
}

/// One statement that touches no table: the cheapest round trip that still
/// proves the store answers, after asking the store whether its file is
/// still the one it opened (a deleted database keeps answering through its
/// open connections, and would lose every write). Any failure is
/// `unavailable` (503), which tells a balancer to send traffic elsewhere;
/// the store's own message goes to the log.
pub async fn check(ctx: &Ctx) -> Result<Health, ApiError> {
    if let Some(e) = ctx.store.gone() {
        let _ = ApiError::from(e);
        return Err(Code::Unavailable.into());
    }
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
