//! A reader of operations out of fuzzer bytes, shared by the fuzz bodies.

/// Reads operations out of fuzzer bytes; runs dry (zeros) when they are used up.
pub(super) struct Ops<'a> {
    pub(super) data: &'a [u8],
}

impl Ops<'_> {
    pub(super) fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    pub(super) fn u16(&mut self) -> u16 {
        u16::from(self.byte()) << 8 | u16::from(self.byte())
    }

    pub(super) fn bytes(&mut self, max: usize) -> &[u8] {
        let n = (self.byte() as usize).min(max).min(self.data.len());
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        head
    }

    pub(super) fn done(&self) -> bool {
        self.data.is_empty()
    }
}
