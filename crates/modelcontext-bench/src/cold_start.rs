//! Cold start measured interleaved: each command is spawned in turn, `--runs` times, and timed
//! from the spawn to the first line of its answer to `initialize` over stdio. The harness's own
//! cold start spawns one server five (or `COLD_RUNS`) times in a row with 200 ms between; on a
//! shared VM its median moves by a third of a millisecond from run to run, more than the
//! differences it is asked to show. Interleaving puts every command in the same moments of the
//! machine, and a few hundred spawns make the median stable.
//!
//! ```text
//! cold_start [--runs 200] [--pause-ms 20] CMD [CMD ...]   # a CMD may carry arguments: "bin --sdk"
//! ```
//!
//! For each command: the median and the first quartile of the times, and the median of the
//! minor page faults the process had taken when its answer arrived (from `/proc/<pid>/stat`, so
//! only the start is counted). Ratios are to the first command.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const INITIALIZE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","#,
    r#""capabilities":{},"clientInfo":{"name":"cold_start","version":"0"}}}"#,
    "\n"
);

/// How long a server may take to answer `initialize` before the run stops with an error.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// One start: how long until the answer, and the page faults taken by then.
struct Start {
    elapsed: Duration,
    minor_faults: u64,
}

fn main() {
    let (runs, pause, commands) = match parse_args() {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("{message}\nusage: cold_start [--runs 200] [--pause-ms 20] CMD [CMD ...]");
            std::process::exit(2);
        }
    };
    let mut starts: Vec<Vec<Start>> = commands.iter().map(|_| Vec::with_capacity(runs)).collect();
    for _ in 0..runs {
        for (command, samples) in commands.iter().zip(&mut starts) {
            match start_once(command) {
                Ok(start) => samples.push(start),
                Err(error) => {
                    eprintln!("{command}: {error}");
                    std::process::exit(1);
                }
            }
            std::thread::sleep(pause);
        }
    }
    report(&commands, &mut starts);
}

fn parse_args() -> Result<(usize, Duration, Vec<String>), String> {
    let (mut runs, mut pause_ms, mut commands) = (200, 20, Vec::new());
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = || -> Result<u64, String> {
            let value = args.next().ok_or(format!("{arg} needs a value"))?;
            value.parse().map_err(|e| format!("{arg}: {e}"))
        };
        match arg.as_str() {
            "--runs" => runs = number()?.max(1) as usize,
            "--pause-ms" => pause_ms = number()?,
            _ => commands.push(arg),
        }
    }
    if commands.is_empty() {
        return Err("no command to start".into());
    }
    Ok((runs, Duration::from_millis(pause_ms), commands))
}

fn start_once(command: &str) -> Result<Start, String> {
    let mut words = command.split_whitespace();
    let program = words.next().ok_or("an empty command")?;
    let began = Instant::now();
    let mut child = Command::new(program)
        .args(words)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("spawn: {e}"))?;
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("no pipes to the child".into());
    };
    stdin.write_all(INITIALIZE.as_bytes()).map_err(|e| format!("write: {e}"))?;
    // The answer is read on a thread of its own, so that a server that never answers is
    // killed after ANSWER_TIMEOUT instead of holding the run (its pipe then ends the read).
    let (answered, answer) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = answered.send(line);
    });
    let Ok(answer) = answer.recv_timeout(ANSWER_TIMEOUT) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("no answer within {ANSWER_TIMEOUT:?}"));
    };
    let elapsed = began.elapsed();
    let minor_faults = minor_faults(child.id()).unwrap_or(0);
    drop(stdin);
    let _ = child.wait();
    if !answer.contains("\"result\"") {
        return Err(format!("no initialize result: {}", answer.trim()));
    }
    Ok(Start { elapsed, minor_faults })
}

/// The process's minor faults so far: field 10 of `/proc/<pid>/stat`.
fn minor_faults(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is parenthesised and may hold spaces: fields are counted after it,
    // where field 3 (the state) comes first.
    stat.rsplit_once(')')?.1.split_whitespace().nth(10 - 3)?.parse().ok()
}

fn report(commands: &[String], starts: &mut [Vec<Start>]) {
    println!("| command | median | p25 | ratio | minor faults |");
    println!("|---|---:|---:|---:|---:|");
    let mut first = None;
    for (command, samples) in commands.iter().zip(starts.iter_mut()) {
        samples.sort_by_key(|s| s.elapsed);
        let median = samples[samples.len() / 2].elapsed.as_secs_f64() * 1e3;
        let p25 = samples[samples.len() / 4].elapsed.as_secs_f64() * 1e3;
        let base = *first.get_or_insert(median);
        let mut faults: Vec<u64> = samples.iter().map(|s| s.minor_faults).collect();
        faults.sort_unstable();
        println!(
            "| `{command}` | {median:.3} ms | {p25:.3} ms | {:.2}x | {} |",
            median / base,
            faults[faults.len() / 2]
        );
    }
}
