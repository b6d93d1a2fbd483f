//! The one-line progress bar drawn from `notifications/progress`.

use super::{MIN_WIDTH, display_width, truncate};

fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        format!("{n:.1}")
    }
}

/// One progress line, at most `width - 1` columns so that redrawing it with `\r` never wraps:
/// `[#####.....]  50% 5/10 message`.
///
/// The bar is a quarter of the width (10 to 30 cells). Without a `total` (or with a total that
/// is not positive) the percentage is unknown: a single `#` moves along the bar with the
/// progress value. The message is cut with `…` to fit. The caller adds `\r` and clears the
/// rest of the line.
pub fn progress_line(
    progress: f64,
    total: Option<f64>,
    message: Option<&str>,
    width: usize,
) -> String {
    let width = width.max(MIN_WIDTH);
    let cells = (width / 4).clamp(10, 30);
    let progress = if progress.is_finite() {
        progress.max(0.0)
    } else {
        0.0
    };
    let (bar, numbers) = match total.filter(|t| t.is_finite() && *t > 0.0) {
        Some(total) => {
            let ratio = (progress / total).clamp(0.0, 1.0);
            let filled = (ratio * cells as f64).floor() as usize;
            let bar = format!("{}{}", "#".repeat(filled), ".".repeat(cells - filled));
            let pct = (ratio * 100.0).floor() as u32;
            (
                bar,
                format!("{pct:>3}% {}/{}", number(progress), number(total)),
            )
        }
        None => {
            let at = (progress as u64 % cells as u64) as usize;
            let bar: String = (0..cells)
                .map(|i| if i == at { '#' } else { '.' })
                .collect();
            (bar, number(progress))
        }
    };
    let mut line = format!("[{bar}] {numbers}");
    if let Some(message) = message.map(str::trim).filter(|m| !m.is_empty()) {
        let room = (width - 1).saturating_sub(display_width(&line) + 1);
        if room >= 2 {
            line.push(' ');
            line.push_str(&truncate(&message.replace(['\n', '\r'], " "), room));
        }
    }
    truncate(&line, width - 1)
}
