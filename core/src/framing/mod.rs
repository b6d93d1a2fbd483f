//! Message framing: newline-delimited JSON for stdio and the EventSource grammar for HTTP.

pub mod lines;
pub mod sse;

/// Appends `bytes` to `buf`, growing its capacity by doubling but never past `cap` (or past
/// what `bytes` needs, if that is more). The capacity is what a buffer costs: plain doubling
/// (`Vec`'s own growth) could reserve almost twice a limit that its length respects.
pub(crate) fn extend_within(buf: &mut Vec<u8>, bytes: &[u8], cap: usize) {
    let needed = buf.len().saturating_add(bytes.len());
    if needed > buf.capacity() {
        let target = buf
            .capacity()
            .saturating_mul(2)
            .clamp(needed, cap.max(needed));
        buf.reserve_exact(target - buf.len());
    }
    buf.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::extend_within;

    #[test]
    fn growth_stops_at_the_cap() {
        let mut buf = Vec::new();
        for _ in 0..100 {
            extend_within(&mut buf, &[7; 3], 250);
            assert!(buf.capacity() <= 250.max(buf.len()), "{}", buf.capacity());
        }
        assert_eq!(buf.len(), 300);
        assert!(buf.iter().all(|&b| b == 7));
        // Doubling below the cap: few reallocations, not one per call.
        let mut buf = Vec::new();
        extend_within(&mut buf, &[1; 10], 1000);
        extend_within(&mut buf, &[1; 1], 1000);
        assert_eq!(buf.capacity(), 20);
    }
}
