//! The documents the Worker serves, fetched from its static assets (binding
//! `ASSETS`, see `crate::assets`) the first time a request needs them, all
//! that request's at once.

use worker::js_sys::{Array, Function, Promise, Reflect};
use worker::wasm_bindgen::{JsCast, JsValue};
use worker::wasm_bindgen_futures::JsFuture;
use worker::worker_sys::web_sys;

use crate::assets::Asset;

/// Loads those of `assets` the isolate does not hold yet. An error is a
/// deployment without its assets (or a runtime that fails to give them).
pub async fn load(env: &JsValue, assets: &[Asset]) -> Result<(), JsValue> {
    let missing: Vec<Asset> = assets.iter().copied().filter(|a| !a.is_loaded()).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let binding = Reflect::get(env, &JsValue::from_str("ASSETS"))?;
    let fetch = Reflect::get(&binding, &JsValue::from_str("fetch"))?.dyn_into::<Function>()?;
    // The host is the binding's own: only the path names the file.
    let asked = missing
        .iter()
        .map(|a| {
            let url = ["https://assets.local/", a.file()].concat();
            fetch.call1(&binding, &JsValue::from_str(&url))
        })
        .collect::<Result<Array, _>>()?;
    let answers = JsFuture::from(Promise::all(&asked)).await?;
    let texts = Array::new();
    for answer in Array::from(&answers).iter() {
        let answer: web_sys::Response = answer.dyn_into()?;
        if answer.status() != 200 {
            return Err(JsValue::from_str("an asset is missing"));
        }
        texts.push(&answer.text()?.into());
    }
    let texts = JsFuture::from(Promise::all(&texts)).await?;
    for (asset, text) in missing.into_iter().zip(Array::from(&texts).iter()) {
        crate::assets::keep(asset, text.as_string().unwrap_or_default());
    }
    Ok(())
}
