//! ring-tokio: the ring benchmark on tokio, one task per ring member.
//!
//! A multi_thread runtime with P workers runs the members, and the task
//! that spawns them: the main thread only waits. (For P=1, tokio's
//! current_thread runtime, which runs tasks on the main thread, has no
//! LIFO slot: a woken member waits behind every ready one, which made
//! wide rings several times as slow.) Links are tokio mpsc channels of
//! capacity N: a send never waits, as a wake-up in the other rings does
//! not (no more are pending; see ring-go).

use std::process::ExitCode;
use std::time::Instant;

use tokio::runtime::Builder;
use tokio::sync::mpsc;
use usched_peers::{EXIT_FAIL, Ring, complain, cycle_links, member, page_in};

const PROG: &str = "ring-tokio";

fn main() -> ExitCode {
    let cfg = match Ring::setup(PROG) {
        Ok(cfg) => cfg,
        Err(code) => return code,
    };
    let rt = Builder::new_multi_thread()
        .worker_threads(cfg.p as usize)
        .build();
    let rt = match rt {
        Ok(rt) => rt,
        Err(e) => {
            complain(format_args!("{PROG}: cannot start the runtime: {e}"));
            return ExitCode::from(EXIT_FAIL);
        }
    };

    let run = rt.spawn(async move {
        let mut tasks = Vec::with_capacity(cfg.members());
        let mut counts = Vec::with_capacity(cfg.members());
        page_in(&mut tasks);
        page_in(&mut counts);
        let start = Instant::now();
        for c in 0..cfg.r {
            let links = cycle_links(&cfg, c, || mpsc::channel(cfg.n as usize)).await;
            for (j, (inbox, out)) in (0..).zip(links) {
                tasks.push(tokio::spawn(member(j, cfg.n, cfg.m, inbox, out)));
            }
        }
        for task in tasks {
            // No Err comes back: a panic hook ends the run first (0 would fail it)
            counts.push(task.await.unwrap_or(0));
        }
        (counts, start.elapsed())
    });
    match rt.block_on(run) {
        Ok((counts, elapsed)) => cfg.finish(PROG, &counts, elapsed),
        Err(e) => {
            complain(format_args!("{PROG}: the run failed: {e}"));
            ExitCode::from(EXIT_FAIL)
        }
    }
}
