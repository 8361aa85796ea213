import Synchronization

/// A `Double` read and written without a lock: its bit pattern in an
/// `Atomic<UInt64>`. For values every request reads and a test or a
/// rotation rarely writes (the virtual clock's offset, the key ring's next
/// grace end): an atomic load leaves the cache line shared between cores,
/// where taking a lock would move it.
struct AtomicDouble: ~Copyable, Sendable {
    private let bits: Atomic<UInt64>

    init(_ value: Double) { bits = Atomic(value.bitPattern) }

    func load() -> Double { Double(bitPattern: bits.load(ordering: .acquiring)) }

    func store(_ value: Double) { bits.store(value.bitPattern, ordering: .releasing) }

    /// Adds `amount`; concurrent adds all count.
    func add(_ amount: Double) {
        var seen = bits.load(ordering: .relaxed)
        while true {
            let (exchanged, original) = bits.compareExchange(
                expected: seen, desired: (Double(bitPattern: seen) + amount).bitPattern, ordering: .acquiringAndReleasing)
            if exchanged { return }
            seen = original
        }
    }
}
