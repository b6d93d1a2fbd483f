//! [`ListBudget`]: how much one paginated list (`tools/list`, `resources/list`, ... all
//! pages together) may cost before the client gives up.

use std::fmt;

/// The most pages a list may have by default (a server handing out fresh cursors forever).
pub const MAX_PAGES: usize = 10_000;

/// The limits of one paginated list, over all its pages together, set with
/// [`ClientBuilder::list_budget`](crate::ClientBuilder::list_budget).
///
/// A page count alone does not bound memory: a server handing out a fresh `nextCursor` with
/// every page of large items grows the list by hundreds of megabytes a second. Each page is
/// checked as it arrives, so at most one page (itself bounded by the message size limit)
/// lies beyond the budget when [`Error::ListBudget`](crate::Error::ListBudget) is returned.
///
/// ```
/// let budget = mcp_tokio::driver::ListBudget::default()
///     .max_bytes(8 << 20)
///     .max_items(10_000);
/// assert_eq!(budget.bytes(), 8 << 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListBudget {
    bytes: u64,
    items: usize,
    pages: usize,
}

impl Default for ListBudget {
    /// 64 MiB of results, 100 000 items, [`MAX_PAGES`] pages: far beyond any real server's
    /// lists, and far below what exhausts a machine.
    fn default() -> Self {
        ListBudget {
            bytes: 64 << 20,
            items: 100_000,
            pages: MAX_PAGES,
        }
    }
}

impl ListBudget {
    /// The most bytes of JSON results (the `result` members of every page) in one list.
    #[must_use]
    pub fn max_bytes(mut self, bytes: u64) -> Self {
        self.bytes = bytes;
        self
    }

    /// The most items (tools, resources, templates, prompts) in one list.
    #[must_use]
    pub fn max_items(mut self, items: usize) -> Self {
        self.items = items;
        self
    }

    /// The most pages in one list.
    #[must_use]
    pub fn max_pages(mut self, pages: usize) -> Self {
        self.pages = pages;
        self
    }

    /// The byte budget.
    #[must_use]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The item budget.
    #[must_use]
    pub fn items(&self) -> usize {
        self.items
    }

    /// The page budget.
    #[must_use]
    pub fn pages(&self) -> usize {
        self.pages
    }

    /// Which budget a list that has grown to `used` exceeds, if any.
    pub(crate) fn exceeded(&self, used: ListUsage) -> Option<ListLimit> {
        if used.bytes > self.bytes {
            Some(ListLimit::Bytes(self.bytes))
        } else if used.items > self.items {
            Some(ListLimit::Items(self.items))
        } else if used.pages > self.pages {
            Some(ListLimit::Pages(self.pages))
        } else {
            None
        }
    }
}

/// What a list has cost so far.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ListUsage {
    pub(crate) bytes: u64,
    pub(crate) items: usize,
    pub(crate) pages: usize,
}

/// The budget a paginated list exceeded, in [`Error::ListBudget`](crate::Error::ListBudget).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListLimit {
    /// More bytes of results than this.
    Bytes(u64),
    /// More items than this.
    Items(usize),
    /// More pages than this.
    Pages(usize),
}

impl fmt::Display for ListLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ListLimit::Bytes(n) if n >= 1 << 20 && n % (1 << 20) == 0 => {
                write!(f, "the byte budget ({} MiB)", n >> 20)
            }
            ListLimit::Bytes(n) => write!(f, "the byte budget ({n} bytes)"),
            ListLimit::Items(n) => write!(f, "the item budget ({n} items)"),
            ListLimit::Pages(n) => write!(f, "the page budget ({n} pages)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_exceeded_budget_is_named() {
        let b = ListBudget::default()
            .max_bytes(100)
            .max_items(10)
            .max_pages(3);
        let used = |bytes, items, pages| ListUsage {
            bytes,
            items,
            pages,
        };
        assert_eq!(b.exceeded(used(100, 10, 3)), None);
        assert_eq!(b.exceeded(used(101, 10, 3)), Some(ListLimit::Bytes(100)));
        assert_eq!(b.exceeded(used(1, 11, 3)), Some(ListLimit::Items(10)));
        assert_eq!(b.exceeded(used(1, 1, 4)), Some(ListLimit::Pages(3)));
        assert_eq!(
            ListLimit::Bytes(64 << 20).to_string(),
            "the byte budget (64 MiB)"
        );
        assert_eq!(ListLimit::Items(5).to_string(), "the item budget (5 items)");
    }
}
