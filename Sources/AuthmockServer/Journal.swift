public import Foundation
import AuthmockCore
import DequeModule
import Synchronization

/// What a request presented as a credential, and its state at arrival.
public struct PresentedToken: Sendable, Codable, Equatable {
    public enum Kind: String, Sendable, Codable { case access, refresh }

    /// A token's state as the journal names it: `valid`, or the failure the
    /// token core found (`expired`, `revoked`, `rotated-reuse`,
    /// `wrong-signature`, ...; derived from the failure enums, so the list
    /// cannot drift). Encoded as the plain string.
    public struct State: RawRepresentable, Sendable, Codable, Hashable, ExpressibleByStringLiteral, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { rawValue = value }
        public var description: String { rawValue }

        public static let valid: State = "valid"
        public static let unknown: State = "unknown"
        /// A rotated refresh token presented past the grace window: the family is revoked.
        public static let rotatedReuse: State = "rotated-reuse"
        /// A rotated refresh token presented inside the grace window: accepted.
        public static let rotatedGrace: State = "rotated-grace"
    }

    public var kind: Kind
    /// The access token's `jti` or the refresh token's id; nil when unreadable.
    public var id: String? {
        get { storedID?.text }
        set { storedID = newValue.map(TokenID.init) }
    }
    public var state: State
    private var storedID: TokenID?

    public init(kind: Kind, id: String?, state: State) {
        self.kind = kind
        self.storedID = id.map(TokenID.init)
        self.state = state
    }

    init(kind: Kind, key: TokenID, state: State) {
        self.kind = kind
        self.storedID = key
        self.state = state
    }

    private enum CodingKeys: String, CodingKey {
        case kind, storedID = "id", state
    }

    var heapBytes: Int { storedID?.heapBytes ?? 0 }
}

/// One request to a non-control route, as the server saw it.
public struct JournalEntry: Sendable, Codable, Equatable {
    /// Assigned on arrival: the order requests reached the server.
    public var seq: Int
    /// Server (virtual) clock at arrival.
    public var virtualTime: Date
    /// Wall clock at arrival.
    public var realTime: Date
    public var method: String
    public var path: String
    /// The `Host` the client addressed (tells the server's own name from another).
    public var host: String?
    public var kind: RouteKind
    /// `Authorization` scheme as sent: Bearer, Basic, none, or what else was there.
    public var scheme: String
    /// `scheme` when the request had no Authorization header.
    public static let noScheme = "none"
    /// The request carried `Authorization: Bearer ...`.
    public var presentsBearer: Bool { scheme == "Bearer" }
    /// The request carried an Authorization header of any scheme.
    public var presentsAuthorization: Bool { scheme != Self.noScheme }
    /// The answer told the client its credentials were refused: a 401, or
    /// `UNAUTHENTICATED` in a GraphQL body (`graphql_auth_errors: body`).
    public var refusedCredentials: Bool {
        status == 401 || status == 200 && errorCode == Self.graphQLUnauthenticated
    }
    static let graphQLUnauthenticated = GraphQLAPIError.unauthenticated.row.code
    /// The Bearer token, when one was sent.
    public var accessToken: PresentedToken?
    /// The refresh token, when the request presented one.
    public var refreshToken: PresentedToken?
    public var grantType: String?
    /// The `X-Authmock-Call` header: which application call this attempt belongs to.
    public var call: String?
    /// A GraphQL request's operation: `query Items`, `mutation CreateNote`.
    public var operation: String? = nil
    /// GraphQL mutations the request applied (nil: not a mutation, or refused before running).
    public var mutationsApplied: Int? = nil
    /// SHA-256 of the body, hex; nil for no body.
    public var bodySHA256: String? {
        get { bodyDigest?.text }
        set { bodyDigest = newValue.map(BodyDigest.init) }
    }
    var bodyDigest: BodyDigest?
    public var bodyBytes: Int
    /// 0 when the connection was closed without an answer.
    public var status: Int
    public var errorCode: String?
    /// Tokens the answer handed out: access `jti` and refresh id.
    public var issuedAccess: String? {
        get { issuedAccessID?.text }
        set { issuedAccessID = newValue.map(TokenID.init) }
    }
    public var issuedRefresh: String? {
        get { issuedRefreshID?.text }
        set { issuedRefreshID = newValue.map(TokenID.init) }
    }
    var issuedAccessID: TokenID?
    var issuedRefreshID: TokenID?
    /// The fault rule that fired, if any.
    public var fault: Int?
    /// True when the client never received the answer (closed or dropped connection).
    public var undelivered: Bool
    public var durationMs: Double

    public init(
        seq: Int, virtualTime: Date, realTime: Date, method: String, path: String, host: String?, kind: RouteKind, scheme: String,
        accessToken: PresentedToken? = nil, refreshToken: PresentedToken? = nil, grantType: String? = nil, call: String? = nil,
        operation: String? = nil, mutationsApplied: Int? = nil, bodySHA256: String? = nil, bodyBytes: Int, status: Int,
        errorCode: String? = nil, issuedAccess: String? = nil, issuedRefresh: String? = nil, fault: Int? = nil,
        undelivered: Bool, durationMs: Double
    ) {
        self.seq = seq
        self.virtualTime = virtualTime
        self.realTime = realTime
        self.method = method
        self.path = path
        self.host = host
        self.kind = kind
        self.scheme = scheme
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.grantType = grantType
        self.call = call
        self.operation = operation
        self.mutationsApplied = mutationsApplied
        self.bodyDigest = bodySHA256.map(BodyDigest.init)
        self.bodyBytes = bodyBytes
        self.status = status
        self.errorCode = errorCode
        self.issuedAccessID = issuedAccess.map(TokenID.init)
        self.issuedRefreshID = issuedRefresh.map(TokenID.init)
        self.fault = fault
        self.undelivered = undelivered
        self.durationMs = durationMs
    }

    private enum CodingKeys: String, CodingKey {
        case seq, virtualTime, realTime, method, path, host, kind, scheme, accessToken, refreshToken, grantType, call, operation
        case mutationsApplied, bodyDigest = "bodySHA256", bodyBytes, status, errorCode
        case issuedAccessID = "issuedAccess", issuedRefreshID = "issuedRefresh", fault, undelivered, durationMs
    }
}

/// Filters of `GET /_authmock/journal` and the runner's queries.
public struct JournalFilter: Sendable, Equatable {
    public var kinds: Set<RouteKind>?
    public var call: String?
    /// Only entries with `seq` greater than this.
    public var since: Int?
    /// At most this many entries, the oldest that match (a page: the next
    /// one starts at `since` = the last `seq`). Counts refuse it.
    public var limit: Int?
    /// Only entries with `seq` up to this (a streamed answer ends where the
    /// journal stood when it began, however fast requests keep coming).
    var through: Int?

    public init(kinds: Set<RouteKind>? = nil, call: String? = nil, since: Int? = nil, limit: Int? = nil) {
        self.kinds = kinds
        self.call = call
        self.since = since
        self.limit = limit
    }

    func admits(_ entry: JournalEntry) -> Bool {
        (kinds == nil || kinds!.contains(entry.kind)) && (call == nil || entry.call == call) && (since == nil || entry.seq > since!)
            && (through == nil || entry.seq <= through!)
    }
}

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
        bytes += size(operation) + size(grantType) + size(errorCode) + (issuedAccessID?.heapBytes ?? 0) + (issuedRefreshID?.heapBytes ?? 0)
        return bytes + (bodyDigest?.heapBytes ?? 0) + (accessToken?.heapBytes ?? 0) + (refreshToken?.heapBytes ?? 0)
    }
}
