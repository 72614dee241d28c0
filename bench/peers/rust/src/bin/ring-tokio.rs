//! ring-tokio: the ring benchmark on tokio, one task per ring member.
//!
//! P=1 uses the current_thread runtime (all tasks on the main thread);
//! P>1 a multi_thread runtime with P workers. Links are tokio mpsc
//! channels of capacity 1, tokio's closest thing to a rendezvous.

use std::process::ExitCode;
use std::time::Instant;

use tokio::runtime::Builder;
use tokio::sync::mpsc;
use usched_peers::{EXIT_FAIL, Ring, complain, cycle, member};

const PROG: &str = "ring-tokio";

fn main() -> ExitCode {
    let cfg = match Ring::setup(PROG) {
        Ok(cfg) => cfg,
        Err(code) => return code,
    };
    let rt = match cfg.p {
        1 => Builder::new_current_thread().build(),
        p => Builder::new_multi_thread()
            .worker_threads(p as usize)
            .build(),
    };
    let rt = match rt {
        Ok(rt) => rt,
        Err(e) => {
            complain(format_args!("{PROG}: cannot start the runtime: {e}"));
            return ExitCode::from(EXIT_FAIL);
        }
    };

    let (counts, elapsed) = rt.block_on(async {
        let mut tasks = Vec::with_capacity(cfg.members());
        let mut counts = Vec::with_capacity(cfg.members());
        let start = Instant::now();
        for _ in 0..cfg.r {
            for (j, (inbox, out)) in (0..).zip(cycle(cfg.n, || mpsc::channel(1))) {
                tasks.push(tokio::spawn(member(j, cfg.n, cfg.m, inbox, out)));
            }
        }
        for task in tasks {
            counts.push(task.await.unwrap_or(0)); // a panicked member counts 0
        }
        (counts, start.elapsed())
    });
    cfg.finish(PROG, &counts, elapsed)
}
