//! An HTTP service on a multi-threaded tokio runtime, every request sharing one filter.
//!
//! Requests and answers are JSON:
//!
//! | request | body | answer |
//! | --- | --- | --- |
//! | `POST /insert` | `{"key": "k"}` | `{"inserted": true}` |
//! | `POST /lookup` | `{"key": "k"}` | `{"present": true}` |
//! | `POST /remove` | `{"key": "k"}` | `{"removed": true}` |
//! | `POST /lookup-batch` | `{"keys": ["a", "b"]}` | `{"present": [true, false]}` |
//! | `GET /stats` | | `{"filter": …, "len": …, "capacity": …}` |
//!
//! Errors answer `{"error": "…"}`: 400 for a body that is not the JSON asked for and for an
//! empty key, 413 for a batch of more keys than the service's limit or a body past axum's
//! default limit of 2 MiB, and 507 Insufficient Storage when the filter has no room for an
//! insert (nothing was changed; the filter holds what it held. The baseline's answer says that
//! it dropped a key it had taken, as the `cuckoofilter` crate's `add` does when it fails).
//! As with any cuckoo filter, remove only keys that were inserted: removing another may remove a
//! different key's fingerprint.

use std::fmt;
use std::hash::DefaultHasher;
use std::io;
use std::net::{SocketAddr, TcpListener as StdTcpListener};
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use concurrent_cuckoo_filter::ConcurrentCuckooFilter;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::{json, Value};

/// Keys one `/lookup-batch` request may ask about, unless configured otherwise.
pub const DEFAULT_MAX_BATCH: usize = 1000;

/// The filter operations the service needs; implemented by this crate's filter and by the
/// baseline, a `Mutex` around the `cuckoofilter` crate's filter.
pub trait SharedFilter: Send + Sync + 'static {
    /// A name for `/stats` and the load test's output.
    fn name(&self) -> &'static str;
    /// Inserts `key`; `false` if there was no room, and then [`when_full`](Self::when_full).
    fn insert(&self, key: &str) -> bool;
    /// What a failed insert did to the filter, for the 507 answer.
    fn when_full(&self) -> &'static str {
        "nothing was changed"
    }
    /// Whether `key` may be present.
    fn contains(&self, key: &str) -> bool;
    /// `contains` of each key.
    fn contains_batch(&self, keys: &[String]) -> Vec<bool>;
    /// Removes one copy of `key`; whether one was found.
    fn remove(&self, key: &str) -> bool;
    /// Items stored.
    fn items(&self) -> usize;
    /// Items the filter was sized for.
    fn capacity(&self) -> usize;
}

impl SharedFilter for ConcurrentCuckooFilter {
    fn name(&self) -> &'static str {
        "concurrent-cuckoo-filter"
    }
    fn insert(&self, key: &str) -> bool {
        ConcurrentCuckooFilter::insert(self, key).is_ok()
    }
    fn contains(&self, key: &str) -> bool {
        ConcurrentCuckooFilter::contains(self, key)
    }
    fn contains_batch(&self, keys: &[String]) -> Vec<bool> {
        ConcurrentCuckooFilter::contains_batch(self, keys)
    }
    fn remove(&self, key: &str) -> bool {
        ConcurrentCuckooFilter::remove(self, key)
    }
    fn items(&self) -> usize {
        ConcurrentCuckooFilter::len(self)
    }
    fn capacity(&self) -> usize {
        ConcurrentCuckooFilter::capacity(self)
    }
}

/// The baseline: the `cuckoofilter` crate's filter behind one `Mutex`.
pub struct MutexBaseline {
    filter: Mutex<cuckoofilter::CuckooFilter<DefaultHasher>>,
    capacity: usize,
}

impl MutexBaseline {
    /// A baseline filter for `capacity` items.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            filter: Mutex::new(cuckoofilter::CuckooFilter::with_capacity(capacity)),
            capacity,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, cuckoofilter::CuckooFilter<DefaultHasher>> {
        // A panic while holding the lock cannot leave the filter half-changed in a way that
        // matters to a benchmark baseline.
        self.filter
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl fmt::Debug for MutexBaseline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MutexBaseline")
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

impl SharedFilter for MutexBaseline {
    fn name(&self) -> &'static str {
        "Mutex<cuckoofilter::CuckooFilter>"
    }
    fn insert(&self, key: &str) -> bool {
        self.lock().add(key).is_ok()
    }
    fn when_full(&self) -> &'static str {
        "the baseline dropped the fingerprint its last move displaced (the cuckoofilter crate's \
         add does): a key it took before may no longer be found"
    }
    fn contains(&self, key: &str) -> bool {
        self.lock().contains(key)
    }
    fn contains_batch(&self, keys: &[String]) -> Vec<bool> {
        let filter = self.lock();
        keys.iter().map(|key| filter.contains(key)).collect()
    }
    fn remove(&self, key: &str) -> bool {
        self.lock().delete(key)
    }
    fn items(&self) -> usize {
        self.lock().len()
    }
    fn capacity(&self) -> usize {
        self.capacity
    }
}

struct App<F> {
    filter: Arc<F>,
    max_batch: usize,
}

impl<F> Clone for App<F> {
    fn clone(&self) -> Self {
        Self {
            filter: Arc::clone(&self.filter),
            max_batch: self.max_batch,
        }
    }
}

/// An error answer: a status and a message, sent as `{"error": message}`.
#[derive(Debug)]
struct ApiError(StatusCode, String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.0, Json(json!({ "error": self.1 }))).into_response()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyRequest {
    key: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchRequest {
    keys: Vec<String>,
}

/// The body, or the reason it was not read (413 past the body size limit) as a JSON error.
fn read(body: Result<Bytes, BytesRejection>) -> Result<Bytes, ApiError> {
    body.map_err(|rejection| ApiError(rejection.status(), rejection.body_text()))
}

/// The body parsed as `T`, a JSON object, or a 400 naming what is wrong.
fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    let bad =
        |why: &dyn fmt::Display| ApiError(StatusCode::BAD_REQUEST, format!("bad JSON body: {why}"));
    // serde would also take a struct from an array of its fields in order.
    if body.trim_ascii_start().first() == Some(&b'[') {
        return Err(bad(&"an array, expected an object"));
    }
    serde_json::from_slice(body).map_err(|err| bad(&err))
}

fn parse_key(body: &[u8]) -> Result<String, ApiError> {
    let KeyRequest { key } = parse(body)?;
    if key.is_empty() {
        return Err(ApiError(StatusCode::BAD_REQUEST, "empty key".into()));
    }
    Ok(key)
}

async fn insert<F: SharedFilter>(
    State(app): State<App<F>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let key = parse_key(&read(body)?)?;
    if !app.filter.insert(&key) {
        return Err(ApiError(
            StatusCode::INSUFFICIENT_STORAGE,
            format!(
                "filter is full: no room for the key ({} items, capacity {}); {}",
                app.filter.items(),
                app.filter.capacity(),
                app.filter.when_full()
            ),
        ));
    }
    Ok(Json(json!({ "inserted": true })))
}

async fn lookup<F: SharedFilter>(
    State(app): State<App<F>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let key = parse_key(&read(body)?)?;
    Ok(Json(json!({ "present": app.filter.contains(&key) })))
}

async fn remove<F: SharedFilter>(
    State(app): State<App<F>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let key = parse_key(&read(body)?)?;
    Ok(Json(json!({ "removed": app.filter.remove(&key) })))
}

async fn lookup_batch<F: SharedFilter>(
    State(app): State<App<F>>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, ApiError> {
    let BatchRequest { keys } = parse(&read(body)?)?;
    if keys.len() > app.max_batch {
        return Err(ApiError(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "too many keys: {} in one batch, at most {}",
                keys.len(),
                app.max_batch
            ),
        ));
    }
    if let Some(at) = keys.iter().position(String::is_empty) {
        return Err(ApiError(
            StatusCode::BAD_REQUEST,
            format!("empty key at index {at}"),
        ));
    }
    Ok(Json(json!({ "present": app.filter.contains_batch(&keys) })))
}

async fn stats<F: SharedFilter>(State(app): State<App<F>>) -> Json<Value> {
    Json(json!({
        "filter": app.filter.name(),
        "len": app.filter.items(),
        "capacity": app.filter.capacity(),
        "max_batch": app.max_batch,
    }))
}

/// The service's routes over `filter`, with at most `max_batch` keys per batched lookup.
pub fn router<F: SharedFilter>(filter: Arc<F>, max_batch: usize) -> Router {
    Router::new()
        .route("/insert", post(insert::<F>))
        .route("/lookup", post(lookup::<F>))
        .route("/remove", post(remove::<F>))
        .route("/lookup-batch", post(lookup_batch::<F>))
        .route("/stats", get(stats::<F>))
        .fallback(no_route)
        .method_not_allowed_fallback(wrong_method)
        .with_state(App { filter, max_batch })
}

/// A 404 in JSON, as every other error answer is.
async fn no_route(uri: Uri) -> ApiError {
    ApiError(StatusCode::NOT_FOUND, format!("no route {}", uri.path()))
}

/// A 405 in JSON, naming the method refused.
async fn wrong_method(method: Method, uri: Uri) -> ApiError {
    let message = format!("{method} is not allowed on {}", uri.path());
    ApiError(StatusCode::METHOD_NOT_ALLOWED, message)
}

/// A service running on its own tokio runtime; dropping it shuts the runtime down.
pub struct Server {
    addr: SocketAddr,
    runtime: tokio::runtime::Runtime,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server").field("addr", &self.addr).finish()
    }
}

impl Server {
    /// Binds `addr` (port 0: the OS picks one) and serves `filter` on a multi-threaded runtime of
    /// `workers` threads.
    ///
    /// # Errors
    ///
    /// If the runtime cannot start or the address cannot be bound.
    pub fn start<F: SharedFilter>(
        addr: SocketAddr,
        filter: Arc<F>,
        max_batch: usize,
        workers: usize,
    ) -> io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers.max(1))
            .enable_io()
            .build()?;
        let listener = StdTcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let listener = {
            let _context = runtime.enter();
            tokio::net::TcpListener::from_std(listener)?
        };
        let app = router(filter, max_batch);
        runtime.spawn(async move {
            if let Err(err) = axum::serve(listener, app).await {
                eprintln!("server stopped: {err}");
            }
        });
        Ok(Self { addr, runtime })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves until the process ends.
    pub fn run_forever(self) -> ! {
        self.runtime.block_on(std::future::pending::<()>());
        unreachable!("a pending future never completes")
    }
}
