//! `notifications/progress` on stderr: a bar redrawn in place at a terminal, one plain line
//! per update otherwise (a log file or a pipe gets no carriage returns).
//!
//! The bar is drawn by hand: one line of text and a carriage return do not justify a
//! dependency (`indicatif` would bring its own terminal and width handling for the same line).

use std::io::{IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use modelcontext::client::CallOptions;
use modelcontext::types::ProgressNotificationParams;

/// Cells in the bar.
const WIDTH: usize = 30;

/// The progress display of one request.
pub struct Progress {
    started: Instant,
    terminal: bool,
    /// A bar is on screen, so the line must be ended before anything else is printed.
    drawn: AtomicBool,
}

impl Progress {
    /// A display for a request starting now; a bar when stderr is a terminal.
    pub fn start() -> Arc<Progress> {
        let terminal = std::io::stderr().is_terminal();
        Arc::new(Progress { started: Instant::now(), terminal, drawn: AtomicBool::new(false) })
    }

    /// Call options that send every update here.
    pub fn options(self: Arc<Self>) -> CallOptions {
        CallOptions::new().on_progress(move |update| self.show(&update))
    }

    fn show(&self, update: &ProgressNotificationParams) {
        if self.terminal {
            let bar = bar(update, self.started.elapsed());
            let mut stderr = std::io::stderr().lock();
            // \r and "erase line": the bar replaces itself.
            let _ = write!(stderr, "\r\x1b[2K{bar}").and_then(|()| stderr.flush());
            self.drawn.store(true, Ordering::Relaxed);
        } else {
            say!("mcp: progress {}", line(update));
        }
    }
}

impl Drop for Progress {
    /// Ends the bar's line, when one was drawn, so what follows starts on a line of its own.
    /// The display lives as long as the request's options, so this runs when the request ends
    /// or is abandoned (Ctrl-C).
    fn drop(&mut self) {
        if *self.drawn.get_mut() {
            say!("");
        }
    }
}

/// `3/10 (30%) indexing` (a total is optional; so is a message).
fn line(update: &ProgressNotificationParams) -> String {
    let mut line = match update.total {
        Some(total) if total > 0.0 => {
            format!("{}/{} ({:.0}%)", update.progress, total, 100.0 * update.progress / total)
        }
        _ => update.progress.to_string(),
    };
    if let Some(message) = &update.message {
        line.push_str(&format!(" {message}"));
    }
    line
}

/// `[#########.....................]  30% 3/10 indexing 1.2s`; without a total, no bar.
fn bar(update: &ProgressNotificationParams, elapsed: Duration) -> String {
    let seconds = elapsed.as_secs_f64();
    match update.total {
        Some(total) if total > 0.0 => {
            let fraction = (update.progress / total).clamp(0.0, 1.0);
            let filled = (fraction * WIDTH as f64).round() as usize;
            let cells = format!("{}{}", "#".repeat(filled), ".".repeat(WIDTH - filled));
            let message = update.message.as_deref().map(|m| format!(" {m}")).unwrap_or_default();
            let percent = fraction * 100.0;
            format!("[{cells}] {percent:3.0}% {}/{total}{message} {seconds:.1}s", update.progress)
        }
        _ => format!("{} {seconds:.1}s", line(update)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(
        progress: f64,
        total: Option<f64>,
        message: Option<&str>,
    ) -> ProgressNotificationParams {
        let json = serde_json::json!({
            "progressToken": 1, "progress": progress, "total": total, "message": message
        });
        serde_json::from_value(json).expect("progress params")
    }

    #[test]
    fn the_bar_fills_with_the_fraction_done() {
        let half = update(5.0, Some(10.0), Some("indexing"));
        assert_eq!(
            bar(&half, Duration::from_millis(1250)),
            "[###############...............]  50% 5/10 indexing 1.2s"
        );
        let over = update(12.0, Some(10.0), None);
        assert!(bar(&over, Duration::ZERO).starts_with(&format!("[{}] 100%", "#".repeat(30))));
        assert_eq!(bar(&update(3.0, None, None), Duration::from_secs(2)), "3 2.0s");
        assert_eq!(line(&half), "5/10 (50%) indexing");
    }
}
