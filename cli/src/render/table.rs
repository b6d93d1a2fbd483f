//! Tables: column widths fitted to the terminal, truncation with `…`, one wrapping column.

use super::{MIN_WIDTH, display_width, pad, truncate, wrap};

/// How a column's cells sit in their width.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Align {
    /// Left-aligned, padded on the right.
    #[default]
    Left,
    /// Right-aligned (numbers).
    Right,
}

/// One column: its header and how it behaves when space is short.
#[derive(Debug, Clone)]
pub struct Column {
    /// The header text (printed in upper case by convention of the caller).
    pub header: String,
    /// When set, cells wrap onto more lines instead of being truncated. At most one column
    /// should wrap; it gets the space the others leave.
    pub wrap: bool,
    /// Alignment of the cells.
    pub align: Align,
}

impl Column {
    /// A left-aligned column that truncates.
    pub fn new(header: impl Into<String>) -> Self {
        Column {
            header: header.into(),
            wrap: false,
            align: Align::Left,
        }
    }

    /// A column whose cells wrap (descriptions).
    pub fn wrapping(header: impl Into<String>) -> Self {
        Column {
            wrap: true,
            ..Column::new(header)
        }
    }

    /// A right-aligned column (numbers).
    pub fn right(header: impl Into<String>) -> Self {
        Column {
            align: Align::Right,
            ..Column::new(header)
        }
    }
}

/// A table of text cells rendered to a fixed width.
///
/// Columns are separated by two spaces. When the natural widths fit, they are used. The first
/// column is the key (a name, a URI: what a user copies into the next command), so it keeps
/// its full width as long as anything else can give way. When space is short: the wrapping
/// column shrinks first (down to a third of the width), then the widest other truncating
/// columns give up space (never below 4 columns), then the wrapping column shrinks to 12
/// columns, and only then is the key column cut. Lines have no trailing
/// spaces.
#[derive(Debug, Clone)]
pub struct Table {
    columns: Vec<Column>,
    rows: Vec<Vec<String>>,
}

const GAP: usize = 2;
const MIN_COL: usize = 4;
/// The narrowest the wrapping column gets before the key column is cut.
const MIN_WRAP: usize = 12;
/// The index of the key column.
const KEY: usize = 0;

impl Table {
    /// A table with these columns and no rows.
    pub fn new(columns: Vec<Column>) -> Self {
        Table {
            columns,
            rows: Vec::new(),
        }
    }

    /// Adds a row; missing cells are empty, extra cells are ignored. Newlines inside a cell
    /// of a truncating column are shown as spaces.
    pub fn row<I, S>(&mut self, cells: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut row: Vec<String> = cells.into_iter().map(Into::into).collect();
        row.resize(self.columns.len(), String::new());
        self.rows.push(row);
        self
    }

    /// The number of rows added.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    fn natural_widths(&self) -> Vec<usize> {
        self.columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                self.rows
                    .iter()
                    .map(|r| r[i].split('\n').map(display_width).max().unwrap_or(0))
                    .chain([display_width(&c.header)])
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    /// The width of each column at `width`, by the rule in the type's documentation.
    fn fit(&self, width: usize) -> Vec<usize> {
        let mut widths = self.natural_widths();
        let n = widths.len();
        if n == 0 {
            return widths;
        }
        let budget = width.saturating_sub(GAP * (n - 1));
        let total = |w: &[usize]| w.iter().sum::<usize>();
        let wrapping = self.columns.iter().position(|c| c.wrap);
        // The wrapping column gives way first, down to a third of the width.
        if let Some(wi) = wrapping {
            let others: usize = total(&widths) - widths[wi];
            let floor = (width / 3).max(MIN_COL).min(widths[wi]);
            widths[wi] = budget.saturating_sub(others).clamp(floor, widths[wi]);
        }
        // Then the widest truncating column other than the key, one column at a time.
        self.shrink_widest(&mut widths, budget, |i| i != KEY);
        // Then the wrapping column down to a readable minimum.
        if let Some(wi) = wrapping {
            let over = total(&widths).saturating_sub(budget);
            let floor = MIN_WRAP.min(widths[wi]);
            widths[wi] = widths[wi].saturating_sub(over).max(floor);
        }
        // Only then the key column (the terminal is narrower than the key itself).
        self.shrink_widest(&mut widths, budget, |i| i == KEY);
        // A tiny terminal: squeeze the wrapping column to the bone.
        if let Some(wi) = wrapping {
            let over = total(&widths).saturating_sub(budget);
            widths[wi] = widths[wi].saturating_sub(over).max(MIN_COL.min(widths[wi]));
        }
        widths
    }

    /// Takes columns off the widest truncating column that `may` allows (never below
    /// [`MIN_COL`]) until the widths fit `budget` or none can give more.
    fn shrink_widest(&self, widths: &mut [usize], budget: usize, may: impl Fn(usize) -> bool) {
        let over = widths.iter().sum::<usize>().saturating_sub(budget);
        for _ in 0..over {
            let widest = (0..widths.len())
                .filter(|&i| may(i) && !self.columns[i].wrap && widths[i] > MIN_COL)
                .max_by_key(|&i| (widths[i], std::cmp::Reverse(i)));
            match widest {
                Some(i) => widths[i] -= 1,
                None => break,
            }
        }
    }

    /// Renders the header, a rule and the rows, each line ending in `\n`.
    pub fn render(&self, width: usize) -> String {
        let width = width.max(MIN_WIDTH);
        let widths = self.fit(width);
        let mut out = String::new();
        let header: Vec<Vec<String>> = self
            .columns
            .iter()
            .zip(&widths)
            .map(|(c, &w)| vec![truncate(&c.header, w)])
            .collect();
        let mut header_line = String::new();
        self.push_line(&mut header_line, &header, &widths);
        out.push_str(&super::style::header(header_line.trim_end_matches('\n')));
        out.push('\n');
        let rule: Vec<Vec<String>> = widths.iter().map(|&w| vec!["─".repeat(w)]).collect();
        self.push_line(&mut out, &rule, &widths);
        for row in &self.rows {
            let cells: Vec<Vec<String>> = row
                .iter()
                .zip(&self.columns)
                .zip(&widths)
                .map(|((cell, column), &w)| {
                    if column.wrap {
                        wrap(cell, w)
                    } else {
                        vec![truncate(&cell.replace('\n', " "), w)]
                    }
                })
                .collect();
            self.push_line(&mut out, &cells, &widths);
        }
        out
    }

    fn push_line(&self, out: &mut String, cells: &[Vec<String>], widths: &[usize]) {
        let height = cells.iter().map(Vec::len).max().unwrap_or(1).max(1);
        for line_no in 0..height {
            let mut line = String::new();
            for (i, (cell, &w)) in cells.iter().zip(widths).enumerate() {
                if i > 0 {
                    line.push_str(&" ".repeat(GAP));
                }
                let text = cell.get(line_no).map_or("", String::as_str);
                match self.columns[i].align {
                    Align::Left => line.push_str(&pad(text, w)),
                    Align::Right => {
                        line.push_str(&" ".repeat(w.saturating_sub(display_width(text))));
                        line.push_str(text);
                    }
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const URI: &str =
        "file:///home/someone/projects/mcp-rs/shared/spec/schema/2025-11-25/schema.json";

    fn resources() -> Table {
        let mut t = Table::new(vec![
            Column::new("URI"),
            Column::new("NAME"),
            Column::new("TYPE"),
            Column::wrapping("DESCRIPTION"),
        ]);
        t.row([
            URI,
            "schema.json",
            "application/json",
            "The protocol's JSON schema for this version, with every type the messages use.",
        ]);
        t.row([
            "demo://readme",
            "readme",
            "text/plain",
            "About this server.",
        ]);
        t
    }

    fn first_cells(text: &str) -> Vec<String> {
        text.lines()
            .skip(2)
            .filter_map(|l| l.split("  ").next())
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn the_key_column_keeps_its_full_width_at_120_columns() {
        let text = resources().render(120);
        assert_eq!(first_cells(&text), [URI, "demo://readme"], "{text}");
        assert!(text.lines().all(|l| display_width(l) <= 120), "{text}");
        // The other columns and the description gave way instead.
        assert!(text.contains("…") || text.lines().count() > 4, "{text}");
    }

    #[test]
    fn other_columns_are_cut_before_the_key() {
        // 78 (URI) + 3 gaps of 2: 116 columns leave 32 for the rest: the name and type are
        // cut to their minimum, the description wraps in what is left; the URI stays whole.
        let text = resources().render(116);
        assert_eq!(first_cells(&text)[0], URI, "{text}");
        assert!(text.lines().all(|l| display_width(l) <= 116), "{text}");
        assert_eq!(resources().fit(116), [78, MIN_COL, MIN_COL, 24]);
        assert_eq!(display_width(URI), 78);
        let row = text.lines().nth(2).unwrap();
        assert!(row.contains("sche…") || row.contains("sch…"), "{text}");
    }

    #[test]
    fn the_key_is_cut_only_when_nothing_else_can_give() {
        let text = resources().render(60);
        assert!(text.lines().all(|l| display_width(l) <= 60), "{text}");
        let key = &first_cells(&text)[0];
        assert!(
            key.ends_with('…') && key.starts_with("file:///home/"),
            "{text}"
        );
        // Every other column is at its minimum before the key lost anything.
        let widths: Vec<usize> = resources().fit(60);
        assert_eq!(&widths[1..], &[MIN_COL, MIN_COL, MIN_WRAP], "{text}");
        assert_eq!(widths.iter().sum::<usize>() + 3 * GAP, 60, "{text}");
    }

    #[test]
    fn natural_widths_are_kept_when_they_fit() {
        let mut t = Table::new(vec![Column::new("NAME"), Column::wrapping("DESCRIPTION")]);
        t.row(["echo", "Returns the text."]);
        assert_eq!(
            t.render(200),
            "NAME  DESCRIPTION\n────  ─────────────────\necho  Returns the text.\n"
        );
    }
}
