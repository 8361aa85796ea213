//! authmock driver (stdio, protocol version 1) for the `oauth2` crate
//! (Debian's librust-oauth2-dev) with reqwest's blocking client.
//!
//! Recipe: the crate's examples (`BasicClient::new` with the token URL,
//! `exchange_password` to sign in, `exchange_refresh_token(..).request(http_client)`
//! to refresh). The crate makes no resource requests, so the glue around it is
//! the application's, as Rust services write it: the tokens in a `Mutex`; the
//! bearer token only on requests to the API's own origin; on a 401 whose
//! challenge is Bearer (or absent), refresh while holding the lock unless
//! another thread already replaced the token this request carried, then send
//! the request once more. An OAuth 2.0 error from the token endpoint means
//! "sign in again"; no answer, or one that is not an OAuth 2.0 error, is this
//! call's transport error.
use oauth2::basic::BasicClient;
use oauth2::reqwest::http_client;
use oauth2::{AuthUrl, ClientId, ClientSecret, RefreshToken, RequestTokenError, ResourceOwnerPassword, ResourceOwnerUsername, TokenResponse, TokenUrl};
use serde_json::{json, Value};
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};

#[derive(Default)]
struct Session {
    access: String,
    refresh: Option<String>,
    refused: bool,
}

struct App {
    base: String,
    oauth: BasicClient,
    http: reqwest::blocking::Client,
    session: Mutex<Session>,
}

impl App {
    fn login(&self, message: &Value) -> Value {
        let (user, password) = (message["username"].as_str().unwrap_or(""), message["password"].as_str().unwrap_or(""));
        match self.oauth.exchange_password(&ResourceOwnerUsername::new(user.into()), &ResourceOwnerPassword::new(password.into())).request(http_client) {
            Ok(tokens) => {
                *self.session.lock().unwrap() = Session { access: tokens.access_token().secret().clone(), refresh: tokens.refresh_token().map(|t| t.secret().clone()), refused: false };
                json!({"outcome": "ok"})
            }
            Err(error) => json!({"outcome": "http_error", "status": 400, "message": error.to_string()}),
        }
    }

    fn send(&self, message: &Value, url: &str, token: &str) -> reqwest::Result<reqwest::blocking::Response> {
        let method = reqwest::Method::from_bytes(message["method"].as_str().unwrap_or("GET").as_bytes()).unwrap_or(reqwest::Method::GET);
        let mut request = self.http.request(method, url);
        if url.starts_with(&format!("{}/", self.base)) {
            request = request.bearer_auth(token);
        }
        for (name, value) in message["headers"].as_object().into_iter().flatten() {
            request = request.header(name.as_str(), value.as_str().unwrap_or(""));
        }
        if let Some(body) = message["body"].as_str() {
            request = request.body(body.to_string());
        }
        request.send()
    }

    fn request(&self, message: &Value) -> Value {
        let url = message["url"].as_str().map(String::from).unwrap_or_else(|| format!("{}{}", self.base, message["path"].as_str().unwrap_or("/")));
        let sent = self.session.lock().unwrap().access.clone();
        let mut response = match self.send(message, &url, &sent) {
            Ok(response) => response,
            Err(error) => return json!({"outcome": "transport_error", "message": error.to_string()}),
        };
        let challenge = response.headers().get("www-authenticate").and_then(|v| v.to_str().ok()).unwrap_or("Bearer").to_ascii_lowercase();
        if response.status() == 401 && url.starts_with(&format!("{}/", self.base)) && challenge.split(',').any(|c| c.trim_start().starts_with("bearer")) {
            let current = {
                let mut session = self.session.lock().unwrap();
                if session.access == sent {
                    if session.refused || session.refresh.is_none() {
                        return json!({"outcome": "reauth_required"});
                    }
                    let refresh = RefreshToken::new(session.refresh.clone().unwrap());
                    match self.oauth.exchange_refresh_token(&refresh).request(http_client) {
                        Ok(tokens) => {
                            session.access = tokens.access_token().secret().clone();
                            if let Some(rotated) = tokens.refresh_token() {
                                session.refresh = Some(rotated.secret().clone());
                            }
                        }
                        Err(RequestTokenError::ServerResponse(error)) => {
                            session.refused = true;
                            return json!({"outcome": "reauth_required", "message": error.to_string()});
                        }
                        Err(error) => return json!({"outcome": "transport_error", "message": error.to_string()}),
                    }
                }
                session.access.clone()
            };
            response = match self.send(message, &url, &current) {
                Ok(response) => response,
                Err(error) => return json!({"outcome": "transport_error", "message": error.to_string()}),
            };
        }
        let status = response.status().as_u16();
        let body = response.text().unwrap_or_default();
        json!({"outcome": if (200..300).contains(&status) { "ok" } else { "http_error" }, "status": status, "body": body})
    }
}

fn main() {
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let send = move |message: Value| {
        let mut out = out.lock().unwrap();
        // The runner gone (its end of the pipe closed): leave quietly, as at the end of stdin.
        if writeln!(out, "{}", message).and_then(|_| out.flush()).is_err() {
            std::process::exit(0);
        }
    };
    let mut app: Option<Arc<App>> = None;
    let mut workers = Vec::new();
    for line in std::io::stdin().lock().lines() {
        let message: Value = match serde_json::from_str(&line.unwrap_or_default()) {
            Ok(message) => message,
            Err(_) => continue,
        };
        let id = message["id"].clone();
        match message["op"].as_str().unwrap_or("") {
            "hello" => {
                let base = message["baseURL"].as_str().unwrap_or("").to_string();
                let oauth = BasicClient::new(
                    ClientId::new(message["clientId"].as_str().unwrap_or("").into()),
                    Some(ClientSecret::new(message["clientSecret"].as_str().unwrap_or("").into())),
                    AuthUrl::new(format!("{}/oauth/authorize", base)).expect("baseURL"),
                    Some(TokenUrl::new(format!("{}/oauth/token", base)).expect("baseURL")),
                );
                let http = reqwest::blocking::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("HTTP client");
                app = Some(Arc::new(App { base, oauth, http, session: Mutex::new(Session::default()) }));
                send(json!({"id": id, "ok": true, "driver": "rust-oauth2", "version": "4.3.0 (Debian)", "profiles": ["oauth2"], "capabilities": ["url"]}));
            }
            op @ ("login" | "request") if app.is_some() => {
                let (app, send, op) = (app.clone().unwrap(), send.clone(), op.to_string());
                workers.push(std::thread::spawn(move || {
                    let mut result = if op == "login" { app.login(&message) } else { app.request(&message) };
                    result["ok"] = json!(result["outcome"] == "ok");
                    result["id"] = id;
                    send(result);
                }));
            }
            "shutdown" => {
                for worker in workers.drain(..) {
                    let _ = worker.join();
                }
                send(json!({"id": id, "ok": true}));
                return;
            }
            op => send(json!({"id": id, "ok": false, "outcome": "unsupported", "message": format!("unknown op {}", op)})),
        }
    }
}
