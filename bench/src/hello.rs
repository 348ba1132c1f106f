//! The read baseline: a hyper hello-world (same hyper, same tokio runtime
//! shape as `needhave serve`) answering every request with a fixed JSON
//! body of the same size as `GET /posts`; with an `etag`, a request that
//! sends `If-None-Match` gets `304 Not Modified` with that tag (the
//! baseline of a conditional read).

use std::convert::Infallible;
use std::net::SocketAddr;

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

pub async fn serve(addr: SocketAddr, body: Bytes, etag: Option<String>) -> std::io::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    println!("hello: serving http://{}", listener.local_addr()?);
    let stop = async {
        use tokio::io::AsyncReadExt;
        let mut stdin = tokio::io::stdin();
        let mut buf = [0u8; 64];
        while matches!(stdin.read(&mut buf).await, Ok(n) if n > 0) {}
    };
    let mut stop = std::pin::pin!(stop);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                let body = body.clone();
                let etag = etag.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                        let body = body.clone();
                        let not_modified = etag
                            .as_deref()
                            .filter(|_| req.headers().contains_key("if-none-match"));
                        let r = match not_modified {
                            Some(tag) => {
                                let mut r = hyper::Response::new(Full::new(Bytes::new()));
                                *r.status_mut() = hyper::StatusCode::NOT_MODIFIED;
                                r.headers_mut().insert("etag", tag.parse().unwrap());
                                r
                            }
                            None => {
                                let mut r = hyper::Response::new(Full::new(body));
                                r.headers_mut().insert("content-type", "application/json".parse().unwrap());
                                r
                            }
                        };
                        async move { Ok::<_, Infallible>(r) }
                    });
                    let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
            _ = &mut stop => return Ok(()),
        }
    }
}
