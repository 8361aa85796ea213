import Foundation
import AuthmockCore
public import AuthmockModel
import DequeModule
import Synchronization

/// Where journal entries are kept: in this process (`MemoryJournal`, the
/// default), or in one table every replica of a PostgreSQL store shares
/// (`SQLJournal`), so a test steering a cluster reads one ordered journal.
public protocol JournalStore: Sendable {
    /// The sequence number of a request that just arrived: the order of
    /// arrival at this server, or at the cluster when the journal is shared.
    func nextSequence() async throws -> Int
    /// Records an answered request. An entry that cannot be written (a
    /// failing database) is counted as dropped, never an error of the answer.
    func append(_ entry: JournalEntry) async
    /// Replaces the entry of `entry.seq`, if still held: an answer a
    /// removed `delay-response` rule released before its time.
    func amend(_ entry: JournalEntry) async
    /// Matching entries in `seq` order, and how many were dropped overall.
    func entries(_ filter: JournalFilter) async throws -> (entries: [JournalEntry], dropped: Int)
    func count(_ filter: JournalFilter) async throws -> Int
    /// The newest sequence number handed out so far.
    func lastSequence() async throws -> Int
    /// Entries held and their bytes (estimated in memory, stored in a table).
    func usage() async throws -> (entries: Int, bytes: Int)
    func reset() async throws
    /// Drops the journal's storage (the runner's throwaway case servers).
    func discard() async throws
    /// A name for the banner and docs: `memory` or the database's.
    var location: String { get }
}

/// The bounded in-memory journal. Appends from any number of request tasks
/// under one lock, so nothing below the bound is lost; past it (a number of
/// entries, and bytes) the oldest entries go and `dropped` counts them.
///
/// The bytes are what the journal really holds: its ring of entry slots
/// (every slot once the ring has wrapped, used or not) and what the held
/// entries' strings keep on the heap. The ring grows by a quarter at a time,
/// only while the entries seen so far would fit the bound at that size:
/// left to the deque's own growth (half again when full) it held a third
/// more slots than entries, 44 MB of memory for a 32 MiB bound (bench/soak.sh).
public final class MemoryJournal: JournalStore {
    public let capacity: Int
    public let maxBytes: Int
    private static let slotBytes = MemoryLayout<JournalEntry>.stride
    private struct State {
        var entries: Deque<JournalEntry> = []
        /// Slots reserved in `entries`.
        var slots = 0
        /// Heap bytes of the held entries' strings.
        var heapBytes = 0
        var dropped = 0
        var bytes: Int { slots * MemoryJournal.slotBytes + heapBytes }

        mutating func dropOldest() {
            heapBytes -= entries.removeFirst().heapBytes
            dropped += 1
        }
    }
    private let state = Mutex(State())
    /// Apart from `state`: taken at every request's arrival, a counter needs no lock.
    private let nextSeq = Atomic(1)

    public init(capacity: Int = 100_000, maxBytes: Int = 32 << 20) {
        self.capacity = max(1, capacity)
        self.maxBytes = max(1, maxBytes)
    }

    public var location: String { "memory" }

    public func usage() -> (entries: Int, bytes: Int) { state.withLock { ($0.entries.count, $0.bytes) } }

    public func nextSequence() -> Int {
        nextSeq.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    public func lastSequence() -> Int { nextSeq.load(ordering: .relaxed) - 1 }

    public func append(_ entry: JournalEntry) {
        let heap = entry.heapBytes
        state.withLock { state in
            if state.entries.count == state.slots { makeRoom(&state, for: heap) }
            state.entries.append(entry)
            state.heapBytes += heap
            while state.entries.count > capacity || (state.bytes > maxBytes && state.entries.count > 1) { state.dropOldest() }
        }
    }

    public func amend(_ entry: JournalEntry) {
        let heap = entry.heapBytes
        state.withLock { state in
            // The entry is among the newest: search from the end.
            guard let index = state.entries.lastIndex(where: { $0.seq == entry.seq }) else { return }
            state.heapBytes += heap - state.entries[index].heapBytes
            state.entries[index] = entry
        }
    }

    /// A full ring grows when the entries' average size says the larger ring
    /// fits the bound; otherwise the oldest entry makes way.
    private func makeRoom(_ state: inout State, for heap: Int) {
        let count = state.entries.count
        let perEntry = Self.slotBytes + (state.heapBytes + heap) / (count + 1)
        let slots = min(capacity, state.slots + max(256, state.slots / 4), maxBytes / perEntry)
        if slots > state.slots || count == 0 {
            state.slots = max(slots, state.slots, 1)
            state.entries.reserveCapacity(state.slots)
        } else {
            state.dropOldest()
        }
    }

    public func entries(_ filter: JournalFilter = JournalFilter()) -> (entries: [JournalEntry], dropped: Int) {
        // Matching under the lock copies only what matches (a copy of the
        // whole ring would be copied again by the next append).
        let (matching, dropped) = state.withLock { ($0.entries.filter(filter.admits), $0.dropped) }
        let sorted = matching.sorted { $0.seq < $1.seq }
        return (filter.limit.map { Array(sorted.prefix($0)) } ?? sorted, dropped)
    }

    public func count(_ filter: JournalFilter = JournalFilter()) -> Int {
        state.withLock { $0.entries.lazy.filter(filter.admits).count }
    }

    public func reset() {
        state.withLock { $0 = State() }
        nextSeq.store(1, ordering: .relaxed)
    }

    /// Nothing is stored outside this process.
    public func discard() {}
}

/// Requests by kind as they arrive, before they are answered, so a test can
/// wait for a request that is still being answered (a refresh held by a
/// delay). Counted by each replica for the requests it receives.
final class ArrivalCounts: Sendable {
    /// One atomic counter per kind, by ordinal: every request adds one, and
    /// no lock is taken for it.
    private final class Counter: Sendable { let value = Atomic(0) }
    private let counts = RouteKind.allCases.map { _ in Counter() }

    func note(_ kind: RouteKind) {
        counts[kind.ordinal].value.wrappingAdd(1, ordering: .relaxed)
    }

    func count(_ kinds: Set<RouteKind>) -> Int {
        kinds.reduce(0) { $0 + counts[$1.ordinal].value.load(ordering: .relaxed) }
    }

    func reset() {
        for counter in counts { counter.value.store(0, ordering: .relaxed) }
    }
}

extension JournalEntry {
    /// What an entry's strings hold on the heap (`String.heapBytes`), beside
    /// its slot in the journal.
    var heapBytes: Int {
        // Summed in place: an array of the strings would be an allocation per request.
        func size(_ text: String?) -> Int { text?.heapBytes ?? 0 }
        var bytes = size(method) + size(path) + size(host) + size(scheme) + size(call)
        bytes +=
            size(operation) + size(grantType) + size(errorCode) + size(situation) + (issuedAccessID?.heapBytes ?? 0)
            + (issuedRefreshID?.heapBytes ?? 0)
        return bytes + (bodyDigest?.heapBytes ?? 0) + (accessToken?.heapBytes ?? 0) + (refreshToken?.heapBytes ?? 0)
    }
}
