//! Message framing: newline-delimited JSON for stdio and the EventSource grammar for HTTP.

pub mod lines;
pub mod sse;

/// Appends `bytes` to `buf`, growing its capacity by at least doubling but never past `cap`
/// (or past what `bytes` needs, if that is more). The capacity is what a buffer costs: plain
/// doubling (`Vec`'s own growth) could reserve almost twice a limit that its length respects.
///
/// Below the cap, capacities are taken from the ladder `cap`, `cap / 2`, `cap / 4`, ...: the
/// last growth before the cap is then from at most half of it, so a reallocation that moves
/// the buffer briefly holds at most 1.5 times the cap. (Doubling from an arbitrary start, such
/// as a first 100 kB chunk, could leave the step before the cap at 0.76 of it: 1.76 times.)
pub(crate) fn extend_within(buf: &mut Vec<u8>, bytes: &[u8], cap: usize) {
    let needed = buf.len().saturating_add(bytes.len());
    if needed > buf.capacity() {
        let want = buf.capacity().saturating_mul(2).max(needed);
        let target = if want >= cap {
            cap.max(needed)
        } else {
            let mut step = cap;
            while step / 2 >= want {
                step /= 2;
            }
            step
        };
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
        // Steps of the ladder 1000, 500, 250, 125, 62, 31, 15 below the cap: few
        // reallocations, not one per call.
        let mut buf = Vec::new();
        extend_within(&mut buf, &[1; 10], 1000);
        assert_eq!(buf.capacity(), 15);
        extend_within(&mut buf, &[1; 1], 1000);
        assert_eq!(buf.capacity(), 15);
        extend_within(&mut buf, &[1; 10], 1000);
        assert_eq!(buf.capacity(), 31);
    }

    #[test]
    fn the_step_before_the_cap_is_at_most_half_of_it() {
        // 100 kB pieces towards a 16 MiB cap: plain doubling from 100 kB would step from
        // 12.8 MB straight to the cap.
        let cap = 16 << 20;
        let mut buf = Vec::new();
        let mut before_cap = 0;
        while buf.len() < cap {
            let old = buf.capacity();
            extend_within(&mut buf, &[0; 100_000], cap);
            if buf.capacity() == cap && old < cap {
                before_cap = old;
            }
        }
        assert!(before_cap > 0 && before_cap <= cap / 2, "{before_cap}");
    }
}
