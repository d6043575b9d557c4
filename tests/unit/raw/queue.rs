use super::*;

#[test]
fn a_thread_keeps_its_queue_up_to_a_bound_and_a_nested_search_gets_its_own() {
    let fill = |queue: &mut SearchQueue, count: usize| {
        queue.nodes.clear();
        for at in 0..count {
            queue.nodes.push(Node {
                bucket: at as u32,
                parent: at as u32,
                fp: 1,
                stamp: 0,
            });
        }
    };
    with_queue(|queue| fill(queue, 100));
    with_queue(|queue| {
        assert!(queue.nodes.capacity() >= 100, "the buffer was kept");
        with_queue(|inner| assert_eq!(inner.nodes.capacity(), 0, "a queue of its own"));
        fill(queue, 10);
        assert_eq!(queue.nodes.len(), 10);
        assert!(queue
            .nodes
            .iter()
            .enumerate()
            .all(|(at, n)| n.bucket == at as u32));
    });
    with_queue(|queue| fill(queue, KEPT_NODES + 1));
    with_queue(|queue| assert_eq!(queue.nodes.capacity(), 0, "a larger buffer was freed"));
}
