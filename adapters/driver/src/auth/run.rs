//! Performing an [`AuthFlow`]: its HTTP requests through the runtime's [`HttpClient`], its
//! deadlines through the runtime's timer, the authorization through an [`Authorizer`], and the
//! one-time secrets from the operating system's CSPRNG.

use std::sync::Arc;

use futures_util::StreamExt as _;
use futures_util::future::{Either, select};
use mcp_proto::auth::{AuthEvent, AuthFlow, AuthHttpRequest, SecretString, Secrets, Tokens};
use mcp_proto::http::Method;
use mcp_proto::http::headers::HeaderList;
use url::Url;

use super::Authorizer;
use crate::Runtime;
use crate::http::{HttpClient, HttpRequestParts};

/// `n` random bytes from the OS CSPRNG, hex-encoded (all hex digits are PKCE-safe).
pub(crate) fn random_hex(n: usize) -> Result<String, String> {
    let mut bytes = vec![0u8; n];
    getrandom::getrandom(&mut bytes).map_err(|e| format!("no randomness from the OS: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Fresh secrets: a 256-bit PKCE verifier (64 hex chars), a 128-bit `state`, a 128-bit `jti`.
pub(crate) fn fresh_secrets() -> Result<Secrets, String> {
    Ok(Secrets::new(
        SecretString::new(random_hex(32)?),
        SecretString::new(random_hex(16)?),
    )
    .with_jwt_id(SecretString::new(random_hex(16)?)))
}

/// The body of a response, up to `limit + 1` bytes (the flow refuses anything longer).
async fn read_body(
    response: crate::http::HttpResponse,
    limit: usize,
) -> Result<(u16, HeaderList, Vec<u8>), String> {
    let mut body = Vec::new();
    let mut stream = response.body;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| e.to_string())?;
        body.extend_from_slice(&chunk);
        if body.len() > limit {
            break;
        }
    }
    Ok((response.status, response.headers, body))
}

/// One request of the flow, bounded by the flow's deadline.
async fn perform<R: Runtime>(
    runtime: &R,
    http: &Arc<dyn HttpClient>,
    flow: &mut AuthFlow,
    request: AuthHttpRequest,
    limit: usize,
) {
    tracing::debug!(
        purpose = ?request.purpose,
        method = request.method.as_str(),
        host = request.url.host_str().unwrap_or(""),
        path = request.url.path(),
        "oauth request"
    );
    let id = request.id;
    let parts = HttpRequestParts::new(request.method, request.url, request.headers, request.body);
    let exchange = Box::pin(async move {
        let response = http.send(parts).await.map_err(|e| e.to_string())?;
        read_body(response, limit).await
    });
    let outcome = match flow.poll_timeout() {
        Some(deadline) => match select(exchange, runtime.sleep_until(deadline)).await {
            Either::Left((r, _)) => Some(r),
            Either::Right(_) => None,
        },
        None => Some(exchange.await),
    };
    let now = runtime.now();
    match outcome {
        Some(Ok((status, headers, body))) => {
            tracing::debug!(status, "oauth response");
            flow.handle_response(now, id, status, &headers, &body);
        }
        Some(Err(message)) => flow.handle_failure(now, id, message),
        None => flow.handle_timeout(now),
    }
}

/// Runs `flow` until it has tokens or fails: performs its requests in order and, when it
/// emits the authorization URL, lets `authorizer` produce the redirect.
pub(crate) async fn drive<R: Runtime>(
    runtime: &R,
    http: &Arc<dyn HttpClient>,
    authorizer: &Arc<dyn Authorizer>,
    flow: &mut AuthFlow,
    limit: usize,
) -> Result<Tokens, String> {
    loop {
        let mut progressed = false;
        if let Some(request) = flow.poll_request() {
            progressed = true;
            perform(runtime, http, flow, request, limit).await;
        }
        while let Some(event) = flow.poll_event() {
            progressed = true;
            match event {
                AuthEvent::AuthorizeUrl(url) => {
                    tracing::debug!(host = url.host_str().unwrap_or(""), "authorization needed");
                    let redirect = authorizer.authorize(url, http.clone());
                    let redirect = match flow.poll_timeout() {
                        Some(deadline) => {
                            match select(redirect, runtime.sleep_until(deadline)).await {
                                Either::Left((r, _)) => r,
                                Either::Right(_) => {
                                    flow.handle_timeout(runtime.now());
                                    continue;
                                }
                            }
                        }
                        None => redirect.await,
                    };
                    match redirect {
                        Ok(r) => flow.handle_redirect(runtime.now(), &r),
                        Err(e) => return Err(format!("authorization failed: {e}")),
                    }
                }
                AuthEvent::Registered(r) => {
                    tracing::debug!(client_id = r.credentials.client_id, "client registered");
                }
                AuthEvent::Tokens(t) => return Ok(t),
                AuthEvent::Failed(e) => return Err(e.to_string()),
                _ => {}
            }
        }
        if !progressed {
            return Err("the authorization flow stalled".into());
        }
    }
}

/// [`Headless`](super::Headless): GET `url`, follow nothing, return the absolute `Location`.
pub(crate) async fn headless_authorize(
    url: Url,
    http: Arc<dyn HttpClient>,
) -> Result<String, String> {
    let parts = HttpRequestParts::new(Method::Get, url.clone(), HeaderList::new(), Vec::new());
    let response = http.send(parts).await.map_err(|e| e.to_string())?;
    let status = response.status;
    let location = response.headers.get("location").map(str::to_owned);
    drop(response);
    match location {
        Some(l) if (300..400).contains(&status) => url
            .join(&l)
            .map(String::from)
            .map_err(|e| format!("bad Location: {e}")),
        _ => Err(format!(
            "the authorization endpoint answered {status} without a redirect (a person must authorize)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_fresh_and_pkce_valid() {
        let a = fresh_secrets().unwrap();
        let b = fresh_secrets().unwrap();
        assert_ne!(a.code_verifier, b.code_verifier);
        assert_ne!(a.state, b.state);
        let v = a.code_verifier.expose();
        assert_eq!(v.len(), 64);
        assert!(v.bytes().all(|c| c.is_ascii_hexdigit()));
        assert!(mcp_proto::auth::pkce::is_valid_verifier(v));
    }
}
