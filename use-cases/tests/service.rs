//! The HTTP service on 127.0.0.1 with a port the OS picks, spoken to over plain HTTP/1.1.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::sync::Arc;

use ccf_use_cases::service::{MutexBaseline, Server, SharedFilter};
use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, DefaultHashBuilder};
use serde_json::{json, Value};

const MAX_BATCH: usize = 100;

fn start<F: SharedFilter>(filter: F) -> Server {
    let any_port = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    Server::start(any_port, Arc::new(filter), MAX_BATCH, 2).unwrap()
}

/// One request on its own connection; the status and the JSON answer.
fn call(server: &Server, method: &str, path: &str, body: &str) -> (u16, Value) {
    let mut stream = TcpStream::connect(server.addr()).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        server.addr(),
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").expect("a header end");
    let status = head.split(' ').nth(1).expect("a status").parse().unwrap();
    let body = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(body).unwrap_or_else(|_| panic!("not JSON: {body}"))
    };
    (status, body)
}

fn post(server: &Server, path: &str, body: Value) -> (u16, Value) {
    call(server, "POST", path, &body.to_string())
}

fn error_of(answer: (u16, Value)) -> (u16, String) {
    (
        answer.0,
        answer.1["error"].as_str().unwrap_or("").to_owned(),
    )
}

fn insert_lookup_remove_and_stats_work_on(server: &Server) {
    assert_eq!(
        post(server, "/lookup", json!({"key": "a"})),
        (200, json!({"present": false}))
    );
    assert_eq!(
        post(server, "/insert", json!({"key": "a"})),
        (200, json!({"inserted": true}))
    );
    assert_eq!(
        post(server, "/lookup", json!({"key": "a"})),
        (200, json!({"present": true}))
    );
    let (status, stats) = call(server, "GET", "/stats", "");
    assert_eq!((status, &stats["len"]), (200, &json!(1)));
    assert_eq!(
        post(server, "/remove", json!({"key": "a"})),
        (200, json!({"removed": true}))
    );
    assert_eq!(
        post(server, "/lookup", json!({"key": "a"})),
        (200, json!({"present": false}))
    );
    assert_eq!(
        post(server, "/remove", json!({"key": "a"})),
        (200, json!({"removed": false}))
    );
}

#[test]
fn insert_lookup_remove_and_stats_answer_in_json() {
    insert_lookup_remove_and_stats_work_on(&start(ConcurrentCuckooFilter::with_capacity(1000)));
}

#[test]
fn the_mutex_baseline_serves_the_same_answers() {
    insert_lookup_remove_and_stats_work_on(&start(MutexBaseline::with_capacity(1000)));
}

#[test]
fn concurrent_clients_insert_and_a_batched_lookup_finds_every_key() {
    let server = start(ConcurrentCuckooFilter::with_capacity(10_000));
    std::thread::scope(|scope| {
        for t in 0..4 {
            let server = &server;
            scope.spawn(move || {
                for i in 0..100 {
                    let answer = post(server, "/insert", json!({"key": format!("{t}-{i}")}));
                    assert_eq!(answer, (200, json!({"inserted": true})));
                }
            });
        }
    });
    for t in 0..4 {
        let keys: Vec<String> = (0..100).map(|i| format!("{t}-{i}")).collect();
        let (status, answer) = post(&server, "/lookup-batch", json!({ "keys": keys }));
        assert_eq!(status, 200);
        assert_eq!(answer["present"], json!(vec![true; 100]));
    }
    let (_, stats) = call(&server, "GET", "/stats", "");
    assert_eq!(stats["len"], json!(400));
    assert_eq!(stats["filter"], json!("concurrent-cuckoo-filter"));
}

#[test]
fn bad_requests_get_a_4xx_that_says_what_is_wrong() {
    let server = start(ConcurrentCuckooFilter::with_capacity(1000));
    let (status, error) = error_of(call(&server, "POST", "/insert", "{\"key\": "));
    assert_eq!(status, 400);
    assert!(error.starts_with("bad JSON body"), "{error}");
    let (status, error) = error_of(post(&server, "/lookup", json!({"name": "a"})));
    assert_eq!(status, 400);
    assert!(error.contains("key"), "{error}");
    assert_eq!(
        error_of(post(&server, "/insert", json!({"key": ""}))),
        (400, "empty key".to_owned())
    );
    assert_eq!(
        error_of(post(&server, "/lookup-batch", json!({"keys": ["a", ""]}))),
        (400, "empty key at index 1".to_owned())
    );
    let keys: Vec<String> = (0..=MAX_BATCH).map(|i| i.to_string()).collect();
    assert_eq!(
        error_of(post(&server, "/lookup-batch", json!({ "keys": keys }))),
        (
            413,
            format!(
                "too many keys: {} in one batch, at most {MAX_BATCH}",
                MAX_BATCH + 1
            )
        )
    );
    let (status, error) = error_of(call(&server, "GET", "/insert", ""));
    assert_eq!(status, 405);
    assert!(
        error.contains("GET") && error.contains("/insert"),
        "{error}"
    );
    let (status, error) = error_of(post(&server, "/insrt", json!({"key": "a"})));
    assert_eq!(status, 404);
    assert!(error.contains("/insrt"), "{error}");
    // Nothing above was inserted.
    assert_eq!(call(&server, "GET", "/stats", "").1["len"], json!(0));
}

#[test]
fn a_body_past_the_size_limit_gets_a_413_in_json_and_changes_nothing() {
    let server = start(ConcurrentCuckooFilter::with_capacity(1000));
    let key = "k".repeat(3 << 20);
    for path in ["/insert", "/lookup", "/lookup-batch"] {
        let (status, error) = error_of(post(&server, path, json!({ "key": key })));
        assert_eq!(status, 413, "{path}");
        assert!(error.contains("length limit"), "{path}: {error}");
    }
    assert_eq!(call(&server, "GET", "/stats", "").1["len"], json!(0));
}

#[test]
fn a_full_filter_answers_507_and_keeps_every_key_it_took() {
    let filter = ConcurrentCuckooFilter::builder()
        .capacity(8)
        .build()
        .unwrap();
    let slots = filter.bucket_count() * filter.bucket_size();
    let server = start(filter);
    let mut taken = Vec::new();
    let refused = loop {
        let key = format!("key-{}", taken.len());
        let (status, answer) = post(&server, "/insert", json!({ "key": key }));
        if status != 200 {
            break (status, answer);
        }
        taken.push(key);
        assert!(taken.len() <= slots, "more keys than slots were taken");
    };
    assert_eq!(refused.0, 507);
    assert!(refused.1["error"]
        .as_str()
        .unwrap()
        .starts_with("filter is full"));
    let (_, stats) = call(&server, "GET", "/stats", "");
    assert_eq!(stats["len"], json!(taken.len()));
    let (_, answer) = post(&server, "/lookup-batch", json!({ "keys": taken }));
    assert_eq!(answer["present"], json!(vec![true; taken.len()]));
}

#[test]
fn keys_chosen_against_the_public_seed_all_go_into_a_randomly_seeded_service() {
    use core::hash::BuildHasher;
    let public = DefaultHashBuilder::new();
    // Keys whose hashes share their top 10 bits, and so nearly their first bucket, under the
    // seed anyone can read in the crate's source.
    let keys: Vec<String> = (0u64..)
        .map(|k| format!("key-{k}"))
        .filter(|key| public.hash_one(key.as_str()) >> 54 == 0)
        .take(5_000)
        .collect();
    let taken = |filter: ConcurrentCuckooFilter| {
        let server = start(filter);
        keys.iter()
            .take_while(|key| post(&server, "/insert", json!({ "key": key })).0 == 200)
            .count()
    };
    let under_public = taken(ConcurrentCuckooFilter::with_capacity(10_000));
    assert!(under_public < 4_000, "{under_public}");
    let random = DefaultHashBuilder::random();
    let under_random = taken(ConcurrentCuckooFilter::with_capacity_and_hasher(
        10_000, random,
    ));
    assert_eq!(under_random, keys.len(), "seed {:#x}", random.seed());
}

#[test]
fn a_body_that_is_not_a_json_object_gets_a_400_and_changes_nothing() {
    let server = start(ConcurrentCuckooFilter::with_capacity(1000));
    for (path, body) in [
        ("/insert", json!(["a"])),
        ("/lookup", json!(["a"])),
        ("/remove", json!(["a"])),
        ("/lookup-batch", json!([["a", "b"]])),
    ] {
        let (status, error) = error_of(post(&server, path, body));
        assert_eq!(status, 400, "{path}");
        assert!(error.starts_with("bad JSON body"), "{path}: {error}");
    }
    assert_eq!(call(&server, "GET", "/stats", "").1["len"], json!(0));
}

#[test]
fn the_baselines_507_says_that_it_dropped_a_key_it_had_taken() {
    // The cuckoofilter crate's add, finding no room, drops the fingerprint its last move
    // displaced: keys the baseline took before may be gone, and its answer must not deny it.
    let server = start(MutexBaseline::with_capacity(8));
    let mut taken = Vec::new();
    let mut refused = None;
    for i in 0..200 {
        let key = format!("key-{i}");
        match post(&server, "/insert", json!({ "key": key })) {
            (200, _) => taken.push(key),
            answer => refused = Some(error_of(answer)),
        }
    }
    let (status, error) = refused.expect("a filter for 8 keys refuses some of 200");
    let (_, answer) = post(&server, "/lookup-batch", json!({ "keys": taken }));
    let lost = answer["present"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|present| **present == json!(false))
        .count();
    assert!(lost > 0, "no key of {taken:?} was dropped");
    assert_eq!(status, 507);
    assert!(
        !error.contains("nothing was changed") && error.contains("dropped"),
        "{lost} of {} keys taken are gone, and the 507 says: {error}",
        taken.len()
    );
}
