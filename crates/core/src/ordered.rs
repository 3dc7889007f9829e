//! Work done on the rayon pool a bounded window ahead, its results handed to the
//! calling thread in the items' order ([`in_order`]): the store's partition read,
//! the ingest's commit and the one-shot's dedupe are each a parallel step whose
//! results a serial consumer must take in order.
//!
//! Done a batch at a time (a batch worked out in parallel beside the hand-over of
//! the batch before), each side waited for the other at every batch's end and a
//! core sat idle for a fifth of the step (issue 48). Here a pool thread that
//! finishes an item starts the next as soon as the window allows, and nothing
//! waits for a batch.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// What became of one item.
enum Slot<I, T> {
    /// Not started: the first to claim it works it out.
    Waiting(I),
    /// Being worked out by a pool task or the calling thread.
    Working,
    /// Worked out, not yet handed over.
    Done(T),
    /// Handed over (or dropped unworked after the hand-over stopped).
    Handed,
}

/// Works `items` out with `work` on the rayon pool and hands each result to
/// `each` on the calling thread, in the items' order, stopping at the first error
/// `each` returns (items not yet started are then dropped unworked).
///
/// While item `i` is being handed over, the items before `ahead(i)` (exclusive;
/// at least `i + 1`) may be worked out: `ahead` bounds what is held at once. An
/// item no pool thread has started by the time it is needed is worked out by the
/// calling thread itself, so the work progresses when every pool thread is busy
/// elsewhere, or when the caller is the pool's only thread. The calling thread
/// waits for an item another thread is working out on a condition variable,
/// taking no other rayon work meanwhile.
///
/// A `work` that panics still fills its item's slot, with `panicked(i, why)` (the
/// hand-over would otherwise wait for it forever).
///
/// The order of the results, and so of everything built from them, is the items'
/// whatever the thread count.
pub fn in_order<I: Send, T: Send, E>(
    items: Vec<I>,
    ahead: impl Fn(usize) -> usize,
    work: impl Fn(I) -> T + Sync,
    panicked: impl Fn(usize, String) -> T + Sync,
    mut each: impl FnMut(T) -> Result<(), E>,
) -> Result<(), E> {
    let n = items.len();
    let slots: Mutex<Vec<Slot<I, T>>> = Mutex::new(items.into_iter().map(Slot::Waiting).collect());
    let done = Condvar::new();
    let stop = AtomicBool::new(false);
    let lock = || -> MutexGuard<'_, Vec<Slot<I, T>>> {
        slots.lock().unwrap_or_else(PoisonError::into_inner)
    };
    // Works item `i` out unless it was claimed; the result goes to its slot.
    let claim_and_work = |i: usize| {
        let item = {
            let mut s = lock();
            match std::mem::replace(&mut s[i], Slot::Working) {
                Slot::Waiting(item) => item,
                other => {
                    s[i] = other;
                    return;
                }
            }
        };
        if stop.load(Ordering::Relaxed) {
            // Nobody hands it over: dropped where it is.
            lock()[i] = Slot::Handed;
            return;
        }
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(item)))
            .unwrap_or_else(|panic| {
                let why = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                panicked(i, why)
            });
        lock()[i] = Slot::Done(result);
        done.notify_all();
    };
    rayon::in_place_scope(|scope| {
        let mut started = 0;
        for i in 0..n {
            let end = ahead(i).clamp(i + 1, n);
            for j in started.max(i + 1)..end {
                let claim_and_work = &claim_and_work;
                scope.spawn(move |_| claim_and_work(j));
            }
            started = started.max(end);
            claim_and_work(i);
            let result = {
                let mut s = lock();
                loop {
                    match std::mem::replace(&mut s[i], Slot::Handed) {
                        Slot::Done(r) => break r,
                        other => {
                            s[i] = other;
                            s = done.wait(s).unwrap_or_else(PoisonError::into_inner);
                        }
                    }
                }
            };
            if let Err(e) = each(result) {
                stop.store(true, Ordering::Relaxed);
                return Err(e);
            }
        }
        Ok(())
    })
}

/// The exclusive end of the items [`in_order`] works out while item `i` is handed
/// over, for items of `sizes[k]` rows: up to `most` items after `i` and, past the
/// next (worked out ahead whatever its size), no more than `rows` rows.
pub fn window(sizes: &[u64], i: usize, most: usize, rows: u64) -> usize {
    let mut held = 0u64;
    let mut end = i + 1;
    while end < sizes.len() && end - i <= most {
        held += sizes[end];
        if held > rows && end > i + 1 {
            break;
        }
        end += 1;
    }
    end.min(sizes.len().max(i + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_handed_over_in_order_whatever_the_pool() {
        for threads in [1, 2, 4] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let mut seen = Vec::new();
            pool.install(|| {
                in_order(
                    (0..200u64).collect(),
                    |i| i + 5,
                    |x| {
                        // Uneven work, so that later items often finish first.
                        std::thread::sleep(std::time::Duration::from_micros((x * 7919) % 300));
                        x * x
                    },
                    |_, _| u64::MAX,
                    |r| {
                        seen.push(r);
                        Ok::<(), ()>(())
                    },
                )
            })
            .unwrap();
            assert_eq!(
                seen,
                (0..200u64).map(|x| x * x).collect::<Vec<_>>(),
                "{threads} threads"
            );
        }
    }

    #[test]
    fn no_more_than_the_window_is_worked_out_ahead() {
        use std::sync::atomic::AtomicUsize;
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let handed = AtomicUsize::new(0);
        let worst = AtomicUsize::new(0);
        pool.install(|| {
            in_order(
                (0..100usize).collect(),
                |i| i + 3,
                |x| {
                    // Item x may start once items 0..x-2 are handed over (while
                    // item x - 2 is, window 3): never more than 2 past them.
                    let h = handed.load(Ordering::SeqCst);
                    worst.fetch_max(x.saturating_sub(h), Ordering::SeqCst);
                    x
                },
                |_, _| 0,
                |_| {
                    handed.fetch_add(1, Ordering::SeqCst);
                    Ok::<(), ()>(())
                },
            )
        })
        .unwrap();
        assert!(
            worst.load(Ordering::SeqCst) <= 2,
            "{}",
            worst.load(Ordering::SeqCst)
        );
    }

    #[test]
    fn the_first_error_stops_the_hand_over_and_a_panic_is_its_item_s_result() {
        let mut seen = Vec::new();
        let r = in_order(
            (0..50u32).collect(),
            |i| i + 4,
            |x| {
                if x == 7 {
                    panic!("item seven");
                }
                Ok(x)
            },
            |i, why| Err(format!("{i}: {why}")),
            |r: Result<u32, String>| {
                let x = r?;
                seen.push(x);
                Ok(())
            },
        );
        assert_eq!(r, Err("7: item seven".to_string()));
        assert_eq!(seen, (0..7).collect::<Vec<_>>());
    }

    #[test]
    fn the_window_is_bounded_by_items_and_rows() {
        // Sizes 10 each, 25 rows: the next item always, then one more (20 rows),
        // then the third would pass 25.
        let sizes = [10u64; 10];
        assert_eq!(window(&sizes, 0, 8, 25), 3);
        // At most 2 items after i.
        assert_eq!(window(&sizes, 0, 2, 1000), 3);
        // The next item whatever its size.
        assert_eq!(window(&[5, 1000, 1000], 0, 8, 10), 2);
        // The last item: nothing after it.
        assert_eq!(window(&sizes, 9, 8, 25), 10);
    }
}
