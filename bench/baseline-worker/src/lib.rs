//! One route: a random id, its SHA-256, one D1 round trip, a JSON answer.
use sha2::{Digest, Sha256};
use worker::*;

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> Result<Response> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| Error::RustError(e.to_string()))?;
    let id = hex::encode(bytes);
    let hash = hex::encode(Sha256::digest(id.as_bytes()));
    let db = env.d1("DB")?;
    let rows = db
        .prepare("SELECT ?1 AS id, ?2 AS hash, ?3 AS path")
        .bind(&[id.into(), hash.into(), req.path().into()])?
        .all()
        .await?
        .results::<serde_json::Value>()?;
    Response::from_json(&serde_json::json!({ "rows": rows }))
}
