//! What the Rust ring peers share: the strict command line, the ring member
//! (generic over the channel flavour), the memory pre-check, verification
//! and the result line. Each binary only picks a runtime and a channel.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::future::{Future, poll_fn};
use std::io::Write;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_core::Stream;

/// Exit status for a failed run (bad counts, resources exhausted).
pub const EXIT_FAIL: u8 = 1;
/// Exit status for a bad command line.
pub const EXIT_USAGE: u8 = 2;
/// More native threads than this is surely a typo.
pub const MAX_PROCS: u64 = 1024;
/// N*R, as every ring takes (32-bit indices in the C peers).
pub const MAX_THREADS: u64 = 0xffff_ffff;

/// Writes a message on stderr. If even that fails there is nowhere to say
/// so, and the exit status still tells (`eprintln!` would panic instead).
pub fn complain(msg: std::fmt::Arguments) {
    let _ = writeln!(std::io::stderr(), "{msg}");
}

/// A panic in any thread, such as a runtime's worker that could not be
/// started, fails the run with its message: left to the runtime, the
/// process hung (tokio) or aborted (async-std). One line, its reason
/// after the place: `{info}` put the place alone on the first. So does
/// an allocation that fails (`ReportingAlloc`), which names the program.
/// Only the first thread to fail reports (`first_to_fail`): async-std's
/// executor and its I/O driver, both refused a thread, made two lines.
fn fail_on_panic(prog: &'static str) {
    let _ = PROG.set(prog);
    std::panic::set_hook(Box::new(move |info| {
        first_to_fail();
        let payload = info.payload();
        let why = (payload.downcast_ref::<&str>().copied())
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("(no message)");
        match info.location() {
            Some(at) => complain(format_args!("{prog}: panicked at {at}: {why}")),
            None => complain(format_args!("{prog}: panicked: {why}")),
        }
        std::process::exit(i32::from(EXIT_FAIL));
    }));
}

/// The program's name, for `out_of_memory`.
static PROG: OnceLock<&'static str> = OnceLock::new();

/// The system's allocator, except that an allocation it refuses fails the
/// run with one line and exit status 1. Rust's own handler aborts with a
/// backtrace (status 134), and the memory pre-check cannot see everything
/// coming: under a `ulimit -v` a little above its estimate, the workers'
/// stacks and malloc's arenas for them took the rest. No code here asks
/// for memory it can do without, so a refusal is always the end.
struct ReportingAlloc;

#[global_allocator]
static ALLOC: ReportingAlloc = ReportingAlloc;

// SAFETY: every call is System's, with the caller's own arguments; only a
// null result (a refusal) is not returned.
unsafe impl GlobalAlloc for ReportingAlloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        granted(unsafe { System.alloc(layout) }, layout.size())
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        granted(unsafe { System.alloc_zeroed(layout) }, layout.size())
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        granted(unsafe { System.realloc(ptr, layout, new_size) }, new_size)
    }
}

#[inline]
fn granted(ptr: *mut u8, size: usize) -> *mut u8 {
    if ptr.is_null() {
        out_of_memory(size);
    }
    ptr
}

unsafe extern "C" {
    /// The C library's exit without its clean-up (no crate for it here).
    fn _exit(status: i32) -> !;
}

/// A thread that fails the run returns only if it is the first: any other
/// waits for that one's exit, so the report is one line.
fn first_to_fail() {
    static FAILED: AtomicBool = AtomicBool::new(false);

    if FAILED.swap(true, Ordering::Relaxed) {
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
}

/// Ends the run for an allocation of `size` bytes refused: nothing of
/// this allocates. The first thread to fail reports and exits
/// (`first_to_fail`); one refused again while reporting aborts. It exits
/// with `_exit`: `process::exit` ran this thread's thread-local
/// destructors, whose allocations were refused too (an abort, after the
/// report).
#[cold]
#[inline(never)]
fn out_of_memory(size: usize) -> ! {
    thread_local!(static REPORTING: Cell<bool> = const { Cell::new(false) });

    if REPORTING.with(|r| r.replace(true)) {
        std::process::abort();
    }
    first_to_fail();
    let prog = PROG.get().copied().unwrap_or("ring");
    complain(format_args!(
        "{prog}: out of memory: an allocation of {size} bytes was refused"
    ));
    // SAFETY: _exit only ends the process; stdout holds nothing unwritten
    // (the result line, the only output, is flushed at its newline).
    unsafe { _exit(i32::from(EXIT_FAIL)) }
}

const USAGE: &str = "N R M D P\n  \
    N >= 2 threads per cycle, R >= 1 cycles, M >= 1 rounds,\n  \
    D must be 0 (futures are stackless), P native threads (1..1024)";

/// The ring benchmark's command line: `N R M D P`, and USCHED_RING_FAULT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ring {
    pub n: u64,
    pub r: u64,
    pub m: u64,
    pub d: u64,
    pub p: u64,
    /// USCHED_RING_FAULT=spurious: member 0 gets a token nobody handed
    /// it (`cycle_links`), which its checks must catch.
    pub fault: bool,
}

/// The token a faulty run gives a member: no round has it.
pub const UNHANDED: u64 = u64::MAX;

/// Why D must be 0 here.
const D_ZERO: &str = "D must be 0: futures are stackless";

/// Reads USCHED_RING_FAULT, as every ring does: "spurious", or unset or
/// empty. "pad", the stackful rings' other fault, needs D > 0, which these
/// refuse: it is refused saying so.
pub fn fault_wanted(value: Option<&str>) -> Result<bool, String> {
    match value {
        None | Some("") => Ok(false),
        Some("spurious") => Ok(true),
        Some("pad") => Err(format!("USCHED_RING_FAULT=pad needs D > 0, and {D_ZERO}")),
        Some(v) => Err(format!(
            "USCHED_RING_FAULT is {v:?}; the only fault is \"spurious\""
        )),
    }
}

/// Cycle c's links (`cycle`). With USCHED_RING_FAULT, the first cycle's
/// member 0 gets a token nobody counts as handed, through its left
/// neighbour's sender.
pub async fn cycle_links<I, O: Outbox>(
    cfg: &Ring,
    c: u64,
    channel: impl FnMut() -> (O, I),
) -> Vec<(I, O)> {
    let mut links = cycle(cfg.n, channel);
    if cfg.fault && c == 0 {
        let last = links.len() - 1;
        links[last].1.send(UNHANDED).await;
    }
    links
}

impl Ring {
    /// Checks the five positional arguments (without argv[0]).
    pub fn parse<S: AsRef<str>>(args: &[S]) -> Result<Ring, String> {
        if args.len() != 5 {
            return Err(format!("expected 5 arguments, got {}", args.len()));
        }
        let mut v = [0u64; 5];
        for (i, name) in ["N", "R", "M", "D", "P"].iter().enumerate() {
            v[i] = uint(args[i].as_ref()).map_err(|e| format!("{name}: {e}"))?;
        }
        let [n, r, m, d, p] = v;
        let cfg = Ring {
            n,
            r,
            m,
            d,
            p,
            fault: false,
        };
        if n < 2 {
            return Err("N must be at least 2".into());
        }
        if r < 1 {
            return Err("R must be at least 1".into());
        }
        if m < 1 {
            return Err("M must be at least 1".into());
        }
        if !(1..=MAX_PROCS).contains(&p) {
            return Err(format!("P must be between 1 and {MAX_PROCS}"));
        }
        if d != 0 {
            // An async task keeps no stack of its own while it waits, only
            // its future, sized at compile time: no stack to keep D on.
            return Err(D_ZERO.into());
        }
        if n.checked_mul(r).and_then(|nr| nr.checked_mul(m)).is_none() {
            return Err("N*R*M overflows 64 bits".into());
        }
        if n * r > MAX_THREADS {
            return Err(format!(
                "N*R = {} threads is more than {MAX_THREADS}",
                n * r
            ));
        }
        Ok(cfg)
    }

    /// What every peer's `main` does first: parses the arguments, then
    /// refuses a run that cannot fit in memory. The error is the exit
    /// status to return, its message already printed.
    pub fn setup(prog: &'static str) -> Result<Ring, ExitCode> {
        fail_on_panic(prog);
        let cfg = Ring::from_args(prog)?;
        cfg.check_memory(prog)?;
        Ok(cfg)
    }

    /// Parses the arguments, or reports a usage error (exit status 2; also
    /// for one not in UTF-8); `-h` or `--help` among them, whatever the
    /// others are, prints the usage on stdout (exit status 0).
    fn from_args(prog: &str) -> Result<Ring, ExitCode> {
        let usage_error = |e: String| {
            complain(format_args!("{prog}: {e}\nusage: {prog} {USAGE}"));
            ExitCode::from(EXIT_USAGE)
        };
        if std::env::args_os()
            .skip(1)
            .any(|a| a == "-h" || a == "--help")
        {
            if let Err(e) = writeln!(std::io::stdout(), "usage: {prog} {USAGE}") {
                complain(format_args!(
                    "{prog}: cannot write the usage to stdout: {e}"
                ));
                return Err(ExitCode::from(EXIT_FAIL));
            }
            return Err(ExitCode::SUCCESS);
        }
        let args = std::env::args_os()
            .skip(1)
            .map(|a| a.into_string().map_err(|a| format!("{a:?}: not UTF-8")))
            .collect::<Result<Vec<String>, String>>()
            .map_err(usage_error)?;
        let mut cfg = Ring::parse(&args).map_err(usage_error)?;
        let fault = std::env::var_os("USCHED_RING_FAULT");
        let fault = fault.as_ref().map(|v| v.to_str().unwrap_or("(not UTF-8)"));
        cfg.fault = fault_wanted(fault).map_err(usage_error)?;
        Ok(cfg)
    }

    /// Total ring members, N*R.
    pub fn members(&self) -> usize {
        (self.n * self.r) as usize
    }

    /// Total messages, N*R*M (cannot overflow once parsed).
    pub fn messages(&self) -> u64 {
        self.n * self.r * self.m
    }

    /// Checks that every member received M tokens and the total is N*R*M;
    /// on success prints the elapsed seconds, the run's one line of output.
    pub fn finish(&self, prog: &str, counts: &[u64], elapsed: Duration) -> ExitCode {
        let n = self.n as usize;
        if let Some((i, got)) = counts.iter().enumerate().find(|&(_, &c)| c != self.m) {
            complain(format_args!(
                "{prog}: cycle {} member {} received {got} tokens, want {}",
                i / n,
                i % n,
                self.m
            ));
            return ExitCode::from(EXIT_FAIL);
        }
        let total: u64 = counts.iter().sum();
        if counts.len() != self.members() || total != self.messages() {
            complain(format_args!(
                "{prog}: received {total} tokens in all, want {}",
                self.messages()
            ));
            return ExitCode::from(EXIT_FAIL);
        }
        // A result that cannot be written (a full disk) is a failed run.
        if let Err(e) = writeln!(std::io::stdout(), "{:.6}", elapsed.as_secs_f64()) {
            complain(format_args!(
                "{prog}: cannot write the result to stdout: {e}"
            ));
            return ExitCode::from(EXIT_FAIL);
        }
        ExitCode::SUCCESS
    }

    /// Refuses a run estimated to need more memory than is available, or
    /// than `ulimit -v` allows: a Rust program out of memory aborts, or
    /// the kernel kills it, with no useful message, so say so up front
    /// instead. A member (task, channel, join handle) measured about
    /// 1.5 KiB with all of them alive.
    fn check_memory(&self, prog: &str) -> Result<(), ExitCode> {
        check_memory(prog, self.members() as f64 * 2048.0)
    }
}

/// Writes all of `v`'s spare capacity, so that its pages are mapped before
/// the clock starts, as usched's ring does its arrays: a large allocation
/// is fresh pages, and the first pushes faulted them in while timed.
pub fn page_in<T>(v: &mut Vec<T>) {
    for slot in v.spare_capacity_mut() {
        *slot = MaybeUninit::zeroed();
    }
}

/// Parses a strict unsigned decimal: ASCII digits only (Rust's own parser
/// would also take a leading `+`) and the value must fit in 64 bits.
pub fn uint(s: &str) -> Result<u64, String> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{s:?} is not an unsigned decimal integer"));
    }
    s.parse()
        .map_err(|_| format!("{s:?} does not fit in 64 bits"))
}

/// The soft limit of `ulimit -v` in bytes, as `/proc/self/limits` gives it
/// (no libc crate here); None if unlimited or not known.
fn address_space_limit() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = s.lines().find(|l| l.starts_with("Max address space"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

fn check_memory(prog: &str, need: f64) -> Result<(), ExitCode> {
    if let Some(limit) = address_space_limit().filter(|&l| need > l) {
        complain(format_args!(
            "{prog}: needs about {:.0} MiB of memory but ulimit -v allows {:.0} MiB",
            need / 1048576.0,
            limit / 1048576.0
        ));
        return Err(ExitCode::from(EXIT_FAIL));
    }
    let avail = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024.0)
    });
    match avail {
        Some(avail) if need > avail => {
            complain(format_args!(
                "{prog}: needs about {:.0} MiB of memory but only {:.0} MiB are available",
                need / 1048576.0,
                avail / 1048576.0
            ));
            Err(ExitCode::from(EXIT_FAIL))
        }
        _ => Ok(()),
    }
}

/// Receiving end of a member's link from its left neighbour.
pub trait Inbox: Send + 'static {
    /// The next token, or `None` once the channel is closed.
    fn recv(&mut self) -> impl Future<Output = Option<u64>> + Send;
}

/// Sending end of a member's link to its right neighbour.
pub trait Outbox: Send + 'static {
    /// Hands `token` on; false once the channel is closed.
    fn send(&mut self, token: u64) -> impl Future<Output = bool> + Send;
}

/// Builds one cycle's links: member j gets its own inbox and the sender of
/// member (j+1) % n's inbox.
pub fn cycle<I, O>(n: u64, mut channel: impl FnMut() -> (O, I)) -> Vec<(I, O)> {
    let (mut tx, rx): (Vec<O>, Vec<I>) = (0..n).map(|_| channel()).unzip();
    tx.rotate_left(1);
    rx.into_iter().zip(tx).collect()
}

/// Ring member j of n for m rounds; returns how many correct tokens it
/// received. The token is the round number, so one that strays into the
/// wrong round is not counted. A closed channel (a neighbour died) ends the
/// member early, and the verification then reports it.
pub async fn member(j: u64, n: u64, m: u64, mut inbox: impl Inbox, mut out: impl Outbox) -> u64 {
    let mut got = 0;
    let mut sender = 0; // round % n, kept incrementally
    for round in 0..m {
        if sender == j {
            if !out.send(round).await {
                break;
            }
            match inbox.recv().await {
                Some(t) => got += u64::from(t == round),
                None => break,
            }
        } else {
            let Some(t) = inbox.recv().await else { break };
            got += u64::from(t == round);
            if !out.send(t).await {
                break;
            }
        }
        sender += 1;
        if sender == n {
            sender = 0;
        }
    }
    got
}

// The channel flavours the binaries use. They live here because Rust's
// orphan rule wants a trait's impls next to the trait or the type.

impl Inbox for tokio::sync::mpsc::Receiver<u64> {
    fn recv(&mut self) -> impl Future<Output = Option<u64>> + Send {
        tokio::sync::mpsc::Receiver::recv(self)
    }
}

impl Outbox for tokio::sync::mpsc::Sender<u64> {
    async fn send(&mut self, token: u64) -> bool {
        tokio::sync::mpsc::Sender::send(self, token).await.is_ok()
    }
}

impl Inbox for futures_channel::mpsc::Receiver<u64> {
    fn recv(&mut self) -> impl Future<Output = Option<u64>> + Send {
        poll_fn(|cx| Pin::new(&mut *self).poll_next(cx))
    }
}

impl Outbox for futures_channel::mpsc::Sender<u64> {
    /// Waits for room (there always is in the ring) and deposits.
    async fn send(&mut self, token: u64) -> bool {
        poll_fn(|cx| self.poll_ready(cx)).await.is_ok() && self.start_send(token).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Ring, String> {
        Ring::parse(&s.split_whitespace().collect::<Vec<_>>())
    }

    #[test]
    fn accepts_good_lines() {
        let want = Ring {
            n: 4,
            r: 3,
            m: 10,
            d: 0,
            p: 1,
            fault: false,
        };
        assert_eq!(parse("4 3 10 0 1"), Ok(want));
        assert!(parse("2 1 1 0 1024").is_ok());
        assert!(parse("3 1431655765 1 0 1").is_ok()); // N*R = 2^32 - 1
    }

    #[test]
    fn rejects_bad_lines() {
        // One bad command line per '|'-separated field (the first is empty).
        let bad_lines = concat!(
            "|2 1 1 0|2 1 1 0 1 9|2 1 x 0 1|1 1 1 0 1|2 0 1 0 1|2 1 0 0 1",
            "|2 1 1 0 0|2 1 1 0 1025|-2 1 1 0 1|+2 1 1 0 1|2_0 1 1 0 1|0x2 1 1 0 1",
            "|99999999999999999999 1 1 0 1|4294967296 4294967296 4294967296 0 1",
            "|2 1 1 64 1|2 2147483648 1 0 1",
        );
        for bad in bad_lines.split('|') {
            assert!(parse(bad).is_err(), "accepted {bad:?}");
        }
        assert!(Ring::parse(&[" 2", "1", "1", "0", "1"]).is_err());
    }

    #[test]
    fn reads_the_fault() {
        assert_eq!(fault_wanted(None), Ok(false));
        assert_eq!(fault_wanted(Some("")), Ok(false));
        assert_eq!(fault_wanted(Some("spurious")), Ok(true));
        let pad = fault_wanted(Some("pad")).unwrap_err();
        assert!(pad.contains("needs D > 0, and D must be 0"), "{pad}");
        for v in ["0", "Spurious", "spurious "] {
            assert!(fault_wanted(Some(v)).is_err(), "accepted {v:?}");
        }
    }

    #[test]
    fn cycle_links_each_member_to_its_right() {
        let mut next = 0;
        let links = cycle(3, || {
            next += 1;
            (next, next) // (sender id, inbox id)
        });
        assert_eq!(links, vec![(1, 2), (2, 3), (3, 1)]);
    }
}
