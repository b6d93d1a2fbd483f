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
/// Columns are separated by two spaces. When the natural widths fit, they are used. Otherwise
/// the wrapping column shrinks first (down to a third of the width), then the widest
/// truncating columns give up space, never below 4 columns. Lines have no trailing spaces.
#[derive(Debug, Clone)]
pub struct Table {
    columns: Vec<Column>,
    rows: Vec<Vec<String>>,
}

const GAP: usize = 2;
const MIN_COL: usize = 4;

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

    fn fit(&self, width: usize) -> Vec<usize> {
        let mut widths = self.natural_widths();
        let n = widths.len();
        if n == 0 {
            return widths;
        }
        let budget = width.saturating_sub(GAP * (n - 1));
        let total = |w: &[usize]| w.iter().sum::<usize>();
        // The wrapping column gives way first, down to a third of the width.
        if let Some(wi) = self.columns.iter().position(|c| c.wrap) {
            let others: usize = total(&widths) - widths[wi];
            let floor = (width / 3).max(MIN_COL).min(widths[wi]);
            widths[wi] = budget.saturating_sub(others).clamp(floor, widths[wi]);
        }
        // Then the widest truncating column, one column at a time.
        while total(&widths) > budget {
            let widest = (0..n)
                .filter(|&i| !self.columns[i].wrap && widths[i] > MIN_COL)
                .max_by_key(|&i| (widths[i], std::cmp::Reverse(i)));
            match widest {
                Some(i) => widths[i] -= 1,
                None => break,
            }
        }
        // Still too wide (many columns in a tiny terminal): squeeze the wrapping column too.
        if let Some(wi) = self.columns.iter().position(|c| c.wrap) {
            let over = total(&widths).saturating_sub(budget);
            widths[wi] = widths[wi].saturating_sub(over).max(MIN_COL);
        }
        widths
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
        self.push_line(&mut out, &header, &widths);
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
