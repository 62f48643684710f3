//! Runs the calls it reads on stdin through openidauthzen's `AuthZenClient`, as an enforcement point would, and
//! prints what each answered on stdout (one JSON array).
//!
//! Environment: AUTHZEN_PDP, the decision point's identifier (https, as the library requires: it discovers the
//! endpoints from the metadata there); AUTHZEN_ORIGIN, the http origin that stands for it here (a gateway that
//! ends TLS); AUTHZEN_TOKEN, the bearer token. Input: `[{"call": "evaluate" | "evaluate_batch" |
//! "search_subjects" | "search_resources" | "search_actions", "request": {...}}, ...]`, each request in the
//! library's own types. Output, per call: `{"call", "response"}` or `{"call", "error"}`, and
//! `"request_id_echoed"`: whether the answer carried the `X-Request-ID` the library sent.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Mutex;
use std::time::Duration;

use openidauthzen::http::{HttpClient, HttpResponse, Method};
use openidauthzen::{AuthZenClient, Error};
use serde_json::{Value, json};

/// Per request, in order: whether the answer's `x-request-id` is the one sent.
static ECHOES: Mutex<Vec<bool>> = Mutex::new(Vec::new());

/// HTTP/1.1 over a plain TCP connection to AUTHZEN_ORIGIN, for URLs under AUTHZEN_PDP.
struct Origin {
    pdp: String,
    origin: String,
}

impl Origin {
    fn exchange(&self, method: Method, url: &str, headers: &[(&str, &str)], body: Option<Vec<u8>>) -> std::io::Result<HttpResponse> {
        let path = url.strip_prefix(&self.pdp).unwrap_or(url);
        let path = if path.is_empty() { "/" } else { path };
        let host = self.origin.trim_start_matches("http://");
        let verb = match method {
            Method::Get => "GET",
            _ => "POST",
        };
        let body = body.unwrap_or_default();
        let mut head = format!("{verb} {path} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\ncontent-length: {}\r\n", body.len());
        if !body.is_empty() {
            head.push_str("content-type: application/json\r\n");
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let mut stream = TcpStream::connect(host)?;
        stream.set_read_timeout(Some(Duration::from_secs(60)))?;
        stream.write_all(head.as_bytes())?;
        stream.write_all(&body)?;
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw)?;
        let response = parse(&raw)?;
        let sent = headers.iter().find(|(name, _)| name.eq_ignore_ascii_case("x-request-id")).map(|(_, value)| *value);
        let answered = response.headers.iter().find(|(name, _)| name == "x-request-id").map(|(_, value)| value.as_str());
        ECHOES.lock().unwrap().push(sent.is_some() && sent == answered);
        Ok(response)
    }
}

fn invalid(what: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned())
}

/// A response read to the end of the connection (`connection: close`).
fn parse(raw: &[u8]) -> std::io::Result<HttpResponse> {
    let end = raw.windows(4).position(|window| window == b"\r\n\r\n").ok_or_else(|| invalid("no header end"))?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| invalid("no status"))?;
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    Ok(HttpResponse { status, headers, body: raw[end + 4..].to_vec() })
}

#[async_trait::async_trait]
impl HttpClient for Origin {
    async fn request(&self, method: Method, url: &str, headers: &[(&str, &str)], body: Option<Vec<u8>>) -> Result<HttpResponse, Error> {
        self.exchange(method, url, headers, body).map_err(|error| Error::Http(Box::new(error)))
    }
}

fn request<T: serde::de::DeserializeOwned>(step: &Value) -> T {
    serde_json::from_value(step["request"].clone()).expect("a request in the library's types")
}

async fn call(client: &AuthZenClient<Origin>, pdp: &str, token: &str, step: &Value) -> Result<Value, Error> {
    let name = step["call"].as_str().unwrap_or_default();
    let answer = match name {
        "evaluate" => json!(client.evaluate(pdp, token, &request(step)).await?),
        "evaluate_batch" => json!(client.evaluate_batch(pdp, token, &request(step)).await?),
        "search_subjects" => json!(client.search_subjects(pdp, token, &request(step)).await?),
        "search_resources" => json!(client.search_resources(pdp, token, &request(step)).await?),
        "search_actions" => json!(client.search_actions(pdp, token, &request(step)).await?),
        other => panic!("unknown call {other}"),
    };
    Ok(answer)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let variable = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    let (pdp, token) = (variable("AUTHZEN_PDP"), variable("AUTHZEN_TOKEN"));
    let origin = Origin { pdp: pdp.clone(), origin: variable("AUTHZEN_ORIGIN") };
    let client = AuthZenClient::new(origin, Duration::from_secs(300));
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).expect("stdin");
    let steps: Vec<Value> = serde_json::from_str(&input).expect("a JSON array of calls");
    let mut answers = Vec::new();
    if let Err(error) = client.discover(&pdp).await {
        answers.push(json!({ "call": "discover", "error": error.to_string() }));
    }
    for step in &steps {
        let outcome = call(&client, &pdp, &token, step).await;
        let mut answer = match outcome {
            Ok(response) => json!({ "call": step["call"], "response": response }),
            Err(error) => json!({ "call": step["call"], "error": error.to_string() }),
        };
        answer["request_id_echoed"] = json!(ECHOES.lock().unwrap().last().copied().unwrap_or(false));
        answers.push(answer);
    }
    println!("{}", Value::Array(answers));
}
