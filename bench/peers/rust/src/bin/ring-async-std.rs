//! ring-async-std: the ring benchmark on async-std, one task per member.
//!
//! async-std sizes its global executor from ASYNC_STD_THREAD_COUNT when it
//! first starts, so P is put there before any async-std call.
//! P=1: every member is a local task (task::spawn_local, an "unstable"
//! async-std API) run by task::block_on on the main thread; the one global
//! worker thread stays idle. P>1: a task on the global executor's P
//! worker threads spawns the members there, and the main thread only waits
//! (as tokio's does): spawned from the main thread, they were made by a
//! thread beside the P that ran them.
//! Links are futures' mpsc channels with room for N tokens (a buffer of
//! N-1, plus one for the sender): a send never waits, as a wake-up in the
//! other rings does not (no more are pending; see ring-go). (async-std's
//! own bounded channel measured about 1.5x slower here.)

use std::process::ExitCode;
use std::time::Instant;

use async_std::task;
use futures_channel::mpsc;
use usched_peers::{Ring, cycle_links, member, page_in};

const PROG: &str = "ring-async-std";

fn main() -> ExitCode {
    let cfg = match Ring::setup(PROG) {
        Ok(cfg) => cfg,
        Err(code) => return code,
    };
    // SAFETY: no other thread exists yet that could read the environment.
    unsafe { std::env::set_var("ASYNC_STD_THREAD_COUNT", cfg.p.to_string()) };
    task::block_on(async {}); // start the runtime outside the timed phase

    let run = async move {
        let mut tasks = Vec::with_capacity(cfg.members());
        let mut counts = Vec::with_capacity(cfg.members());
        page_in(&mut tasks);
        page_in(&mut counts);
        let start = Instant::now();
        for c in 0..cfg.r {
            let links = cycle_links(&cfg, c, || mpsc::channel(cfg.n as usize - 1)).await;
            for (j, (inbox, out)) in (0..).zip(links) {
                let fut = member(j, cfg.n, cfg.m, inbox, out);
                tasks.push(if cfg.p == 1 {
                    task::spawn_local(fut)
                } else {
                    task::spawn(fut)
                });
            }
        }
        for task in tasks {
            counts.push(task.await);
        }
        (counts, start.elapsed())
    };
    // P>1: the spawning is one of the P workers' work, as in every ring.
    let (counts, elapsed) = if cfg.p == 1 {
        task::block_on(run)
    } else {
        task::block_on(task::spawn(run))
    };
    cfg.finish(PROG, &counts, elapsed)
}
