import NIOCore
import Synchronization

/// Encoded answer bodies that depend only on an immutable key (a token id).
/// Bounded: when full it starts over.
final class ResponseCache: Sendable {
    private let bodies = Mutex([String: ByteBuffer]())
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    func body(for key: String, make: () -> ByteBuffer) -> ByteBuffer {
        if let body = bodies.withLock({ $0[key] }) { return body }
        let body = make()
        bodies.withLock { bodies in
            if bodies.count >= limit { bodies.removeAll(keepingCapacity: true) }
            bodies[key] = body
        }
        return body
    }
}
