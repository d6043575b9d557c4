//! The HTTP filter service on a multi-threaded tokio runtime.
//!
//! `cargo run --release -p ccf-use-cases --bin filter-server -- [--baseline] [--port N]
//! [--capacity N] [--prefill N] [--workers N] [--max-batch N]`
//!
//! Prints `listening on http://ADDR` once it accepts connections. `--baseline` serves a
//! `Mutex<cuckoofilter::CuckooFilter>` instead of the concurrent filter; `--prefill N` inserts
//! the keys `k0` … `k{N-1}` first.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;

use ccf_use_cases::measure::{fail, flag, switch};
use ccf_use_cases::service::{MutexBaseline, Server, SharedFilter, DEFAULT_MAX_BATCH};
use concurrent_cuckoo_filter::{ConcurrentCuckooFilter, DefaultHashBuilder};

fn serve<F: SharedFilter>(filter: F) -> ! {
    let prefill: usize = flag("--prefill", 0);
    for i in 0..prefill {
        if !filter.insert(&format!("k{i}")) {
            fail(format_args!(
                "--prefill {prefill}: the filter is full after {i} keys; raise --capacity (it is \
                 sized for {})",
                filter.capacity()
            ));
        }
    }
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, flag("--port", 0u16)));
    let workers = flag(
        "--workers",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    let server = Server::start(
        addr,
        Arc::new(filter),
        flag("--max-batch", DEFAULT_MAX_BATCH),
        workers,
    )
    .unwrap_or_else(|err| fail(format_args!("cannot serve on {addr}: {err}")));
    let mut out = std::io::stdout();
    writeln!(out, "listening on http://{}", server.addr()).expect("stdout");
    out.flush().expect("stdout");
    server.run_forever()
}

fn main() {
    let capacity: usize = flag("--capacity", 10_000_000);
    if switch("--baseline") {
        serve(MutexBaseline::with_capacity(capacity))
    } else {
        // Keys come from clients: a seed they cannot know keeps chosen keys from filling it.
        let filter = ConcurrentCuckooFilter::builder()
            .capacity(capacity)
            .hasher(DefaultHashBuilder::random())
            .build()
            .unwrap_or_else(|err| fail(format_args!("--capacity {capacity}: {err}")));
        serve(filter)
    }
}
