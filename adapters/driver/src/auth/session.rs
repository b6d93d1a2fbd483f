//! The authorization state of one connection: the token in use, the flow that got it, and the
//! reactions to 401, 403 and expiry.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_proto::auth::{AuthConfig, AuthFlow, Grant, Tokens};
use mcp_proto::http::error::HttpStatusError;
use url::Url;

use super::store::{RefreshGuard, StoredToken, unix_now};
use super::{AuthProvider, run};
use crate::Runtime;
use crate::http::HttpClient;

/// Refresh this long before the stated expiry, so a request does not race it.
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);
/// How often a refresh waiting for another process's refresh looks at the lock again.
const LOCK_POLL: Duration = Duration::from_millis(20);
/// How long a refresh waits for another process's refresh (itself bounded by the token
/// request's own timeouts) before going ahead.
const LOCK_WAIT: Duration = Duration::from_secs(60);

struct State {
    flow: Option<AuthFlow>,
    tokens: Option<Tokens>,
}

/// What the client's request path asks of the authorization; one per connection.
pub(crate) struct AuthSession<R: Runtime> {
    provider: AuthProvider,
    http: Arc<dyn HttpClient>,
    url: Url,
    runtime: R,
    /// An async lock: one flow at a time; concurrent requests that hit a 401 wait for it and
    /// then use its token.
    state: tokio::sync::Mutex<State>,
}

impl<R: Runtime> AuthSession<R> {
    pub(crate) fn new(
        provider: AuthProvider,
        http: Arc<dyn HttpClient>,
        url: Url,
        runtime: R,
    ) -> Self {
        Self {
            provider,
            http,
            url,
            runtime,
            state: tokio::sync::Mutex::new(State {
                flow: None,
                tokens: None,
            }),
        }
    }

    fn key(&self) -> super::TokenKey {
        self.provider.token_key(self.url.as_str())
    }

    fn load(&self) -> Option<StoredToken> {
        match self.provider.store.load(&self.key()) {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(error = %e, "the token store could not be read");
                None
            }
        }
    }

    /// A stored token as the flow's [`Tokens`], its wall-clock expiry turned into an instant.
    fn tokens_of(&self, stored: &StoredToken) -> Tokens {
        let mut t = Tokens::new(stored.access_token.clone());
        t.refresh_token.clone_from(&stored.refresh_token);
        t.scope.clone_from(&stored.scope);
        let now = self.runtime.now();
        t.expires_at = stored.expires_at.map(|at| {
            let left = Duration::from_secs(at.saturating_sub(unix_now()));
            mcp_proto::time::saturating_add(now, left)
        });
        t
    }

    /// Adopts a stored token: its tokens become the ones in use and, when it carries a saved
    /// grant, a resumed flow can refresh it.
    fn adopt(&self, state: &mut State, stored: &StoredToken) {
        let tokens = self.tokens_of(stored);
        state.flow = stored.grant.clone().and_then(|grant| {
            AuthFlow::resume(self.config(), grant, tokens.clone(), self.runtime.now())
                .map_err(|e| tracing::warn!(error = %e, "the stored grant cannot be used"))
                .ok()
        });
        state.tokens = Some(tokens);
    }

    /// The header to start with: a stored token that has not expired, else one refreshed
    /// with the stored refresh token and grant (a new process refreshes what an earlier one
    /// stored), else `None`.
    pub(crate) async fn initial_header(&self) -> Option<String> {
        let stored = self.load()?;
        let mut state = self.state.lock().await;
        self.adopt(&mut state, &stored);
        if !stored.is_expired(EXPIRY_MARGIN.as_secs()) {
            tracing::debug!("using a stored token");
            return state.tokens.as_ref().map(Tokens::authorization_header);
        }
        tracing::debug!("the stored token has expired: refreshing it");
        self.try_refresh(&mut state).await
    }

    fn keep(&self, state: &mut State, tokens: Tokens) -> String {
        let now = self.runtime.now();
        let mut stored = StoredToken::new(tokens.access_token.clone());
        stored.refresh_token.clone_from(&tokens.refresh_token);
        stored.expires_at = tokens
            .expires_at
            .map(|at| unix_now().saturating_add(at.saturating_duration_since(now).as_secs()));
        stored.scope.clone_from(&tokens.scope);
        stored.grant = state.flow.as_ref().and_then(AuthFlow::saved);
        if let Err(e) = self.provider.store.save(&self.key(), &stored) {
            tracing::warn!(error = %e, "the token could not be stored");
        }
        let header = tokens.authorization_header();
        state.tokens = Some(tokens);
        header
    }

    fn config(&self) -> AuthConfig {
        let mut c = AuthConfig::new(
            self.url.clone(),
            self.provider.redirect_uri.clone(),
            self.provider.registration.clone(),
        );
        c.grant = self.provider.grant;
        c.identity_assertion
            .clone_from(&self.provider.identity_assertion);
        c.scopes.clone_from(&self.provider.scopes);
        c.unix_time = Some(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        );
        c
    }

    async fn drive(&self, flow: &mut AuthFlow) -> Result<Tokens, String> {
        let limit = self.config().max_body;
        run::drive(
            &self.runtime,
            &self.http,
            &self.provider.authorizer,
            flow,
            limit,
        )
        .await
    }

    /// A fresh flow from the server's challenge, run to the end.
    async fn authorize(
        &self,
        state: &mut State,
        error: &HttpStatusError,
    ) -> Result<String, String> {
        let secrets = run::fresh_secrets()?;
        let mut flow = AuthFlow::new(self.config(), error.bearer(), secrets, self.runtime.now())
            .map_err(|e| e.to_string())?;
        let result = self.drive(&mut flow).await;
        state.flow = Some(flow);
        Ok(self.keep(state, result?))
    }

    /// Waits for the store's refresh lock ([`TokenStore::try_lock_refresh`]), polling every
    /// [`LOCK_POLL`]. After [`LOCK_WAIT`] (a holder that hangs), or when the lock cannot be
    /// had at all, the refresh goes ahead without it, with a warning.
    ///
    /// [`TokenStore::try_lock_refresh`]: super::TokenStore::try_lock_refresh
    async fn lock_refresh(&self) -> Option<RefreshGuard> {
        let give_up = self.runtime.now() + LOCK_WAIT;
        loop {
            match self.provider.store.try_lock_refresh() {
                Ok(Some(guard)) => return Some(guard),
                Ok(None) if self.runtime.now() < give_up => {
                    self.runtime
                        .sleep_until(self.runtime.now() + LOCK_POLL)
                        .await;
                }
                Ok(None) => {
                    tracing::warn!(
                        "the token store's refresh lock is still held: refreshing without it"
                    );
                    return None;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "the token store's refresh lock failed: refreshing without it");
                    return None;
                }
            }
        }
    }

    /// Refreshes if the flow can; `None` when it has no refresh token or the refresh failed.
    ///
    /// Runs under the store's refresh lock, from reading the stored token to saving the new
    /// one: parallel processes refresh one at a time, each from the token the previous one
    /// stored, so a server that rotates refresh tokens never sees a used one again.
    async fn try_refresh(&self, state: &mut State) -> Option<String> {
        let _guard = self.lock_refresh().await;
        if let Some(stored) = self.load() {
            let in_use = state.tokens.as_ref().map(|t| t.access_token.expose());
            let newer = in_use != Some(stored.access_token.expose());
            if newer || state.flow.is_none() {
                // Stored by another process (or before this flow): its refresh token is the
                // latest, the one this process holds may be used up already.
                self.adopt(state, &stored);
                if newer && !stored.is_expired(EXPIRY_MARGIN.as_secs()) {
                    tracing::debug!("using a token another process refreshed");
                    return state.tokens.as_ref().map(Tokens::authorization_header);
                }
            }
        }
        let flow = state.flow.as_mut()?;
        flow.refresh(self.runtime.now()).ok()?;
        match self.drive(flow).await {
            Ok(t) => {
                tracing::debug!("token refreshed");
                Some(self.keep(state, t))
            }
            Err(e) => {
                tracing::debug!(error = %e, "refresh refused");
                None
            }
        }
    }

    /// Before a request: a refreshed header when the token in use is about to expire.
    pub(crate) async fn before_request(&self) -> Option<String> {
        let mut state = self.state.lock().await;
        let expiring = state
            .tokens
            .as_ref()
            .is_some_and(|t| t.is_expired(self.runtime.now(), EXPIRY_MARGIN));
        if !expiring {
            return None;
        }
        self.try_refresh(&mut state).await
    }

    /// After a 401 or 403: the header to retry with, `Ok(None)` when the status is not an
    /// authorization matter, `Err` when authorization failed. `sent` is the header the failed
    /// request carried: when another request already replaced it, that one is used as is.
    pub(crate) async fn recover(
        &self,
        error: &HttpStatusError,
        sent: Option<&str>,
    ) -> Result<Option<String>, String> {
        let mut state = self.state.lock().await;
        let current = state.tokens.as_ref().map(Tokens::authorization_header);
        if current.is_some() && current.as_deref() != sent {
            return Ok(current);
        }
        match error.status {
            401 => {
                if let Some(h) = self.try_refresh(&mut state).await {
                    return Ok(Some(h));
                }
                if !self.provider.authorize {
                    tracing::debug!("no usable token, and authorizing is not allowed");
                    return Ok(None);
                }
                // Discovery again, not just a new authorization: the server may have moved to
                // another authorization server (then the client registers there anew).
                if self.provider.grant == Grant::AuthorizationCode
                    && let Some(flow) = state.flow.as_mut()
                    && flow
                        .rediscover(self.runtime.now(), error.bearer(), run::fresh_secrets()?)
                        .is_ok()
                {
                    let t = self.drive(flow).await?;
                    return Ok(Some(self.keep(&mut state, t)));
                }
                self.authorize(&mut state, error).await.map(Some)
            }
            403 => {
                if error.bearer().and_then(|b| b.error()) != Some("insufficient_scope")
                    || !self.provider.authorize
                {
                    return Ok(None);
                }
                let Some(flow) = state
                    .flow
                    .as_mut()
                    .filter(|f| f.is_done() && !f.is_resumed())
                else {
                    // A stored token without a flow that can authorize: afresh, for the
                    // challenge.
                    return self.authorize(&mut state, error).await.map(Some);
                };
                let stepped = flow
                    .handle_forbidden(self.runtime.now(), error.bearer(), run::fresh_secrets()?)
                    .map_err(|e| e.to_string())?;
                if !stepped {
                    // The cap: the flow emitted its failure.
                    let reason = std::iter::from_fn(|| flow.poll_event())
                        .find_map(|e| match e {
                            mcp_proto::auth::AuthEvent::Failed(e) => Some(e.to_string()),
                            _ => None,
                        })
                        .unwrap_or_else(|| "step-up refused".into());
                    return Err(reason);
                }
                let t = self.drive(flow).await?;
                Ok(Some(self.keep(&mut state, t)))
            }
            _ => Ok(None),
        }
    }
}
