public import AuthmockCore
public import AuthmockModel
import Foundation

/// The control core: what a test can make the mock do and read back. The
/// HTTP control API (`ControlRoutes`) and the scenario runner both call
/// these, so there is one implementation of each operation; its answers are
/// the control API's (`MockSteering`, which `ControlClient` speaks too).
public struct MockControl: MockSteering {
    // The answers' types are the control API's wire shapes (AuthmockModel); these names stay for existing callers.
    public typealias ClockReading = AuthmockModel.ClockReading
    public typealias KeysView = AuthmockModel.KeysView
    public typealias PruneReport = AuthmockModel.PruneReport

    let mock: Authmock

    /// Drops all tokens, families, fault rules and the journal, and puts the clock back to real time.
    public func reset() async throws(ControlInputError) {
        try await stored { try await mock.authority.reset() }
        mock.learned?.reset()
        mock.faults.reset()
        try await stored("journal") { try await mock.journal.reset() }
        mock.arrivals.reset()
        mock.clock.setOffset(seconds: 0)
        try await stored { try await mock.authority.clockMoved() }
    }

    public func clock() async throws(ControlInputError) -> ClockReading {
        let now = try await stored { try await mock.authority.now() }
        return ClockReading(now: now, offsetSeconds: mock.clock.offsetSeconds)
    }

    /// Moves the server clock forward; time never runs backwards this way.
    public func advanceClock(seconds: Double) async throws(ControlInputError) -> ClockReading {
        guard seconds >= 0, seconds.isFinite else {
            throw ControlInputError(.invalidValue, "seconds must be a finite number >= 0, got \(seconds); use clock/set to move the clock back")
        }
        let limit = VirtualClock.maxOffsetSeconds
        _ = try await stored { try await mock.authority.now() }
        guard mock.clock.offsetSeconds + seconds <= limit else {
            throw ControlInputError(
                .invalidValue,
                "the clock may run at most \(Int(limit)) s (100 years) ahead of real time; it is \(mock.clock.offsetSeconds) s ahead, and \(seconds) s more is too far"
            )
        }
        mock.clock.advance(seconds: seconds)
        try await stored { try await mock.authority.clockMoved() }
        return try await clock()
    }

    public func setClock(offsetSeconds: Double) async throws(ControlInputError) -> ClockReading {
        let limit = VirtualClock.maxOffsetSeconds
        guard offsetSeconds.isFinite, abs(offsetSeconds) <= limit else {
            throw ControlInputError(
                .invalidValue, "offsetSeconds must be a number from -\(Int(limit)) to \(Int(limit)) (100 years either way), got \(offsetSeconds)")
        }
        mock.clock.setOffset(seconds: offsetSeconds)
        try await stored { try await mock.authority.clockMoved() }
        return try await clock()
    }

    // A proxy's tokens are the backend's, as it saw them handed out (`LearnedTokens`).
    public func expire(_ selector: TokenSelector) async throws(ControlInputError) -> TokenChange {
        if let learned = mock.learned { return learned.change(selector, revoke: false, at: mock.clock.now()) }
        return try await stored { try await mock.authority.expire(selector) }
    }
    public func revoke(_ selector: TokenSelector) async throws(ControlInputError) -> TokenChange {
        if let learned = mock.learned { return learned.change(selector, revoke: true, at: mock.clock.now()) }
        return try await stored { try await mock.authority.revoke(selector) }
    }
    public func tokens() async throws(ControlInputError) -> TokenSnapshot {
        if let learned = mock.learned { return learned.snapshot(at: mock.clock.now()) }
        return try await stored { try await mock.authority.snapshot() }
    }

    @discardableResult
    public func addFault(_ rule: FaultRule) -> FaultRuleView { FaultRuleView(mock.faults.add(rule)) }
    public func faults() -> [FaultRuleView] { mock.faults.list().map(FaultRuleView.init) }
    @discardableResult
    public func clearFaults() -> Int { mock.faults.clear() }

    /// A page of the journal as `GET /_authmock/journal` answers it.
    public func journal(_ filter: JournalFilter = JournalFilter()) async throws(ControlInputError) -> ControlWire.JournalPage {
        let (entries, dropped) = try await journalEntries(filter)
        let usage = try await journalUsage()
        return ControlWire.JournalPage(entries: entries, dropped: dropped, last: entries.last?.seq, held: usage.entries, heldBytes: usage.bytes)
    }

    /// The entries alone, without what the journal holds (a database query
    /// of its own): `JournalStream` reads pages of them.
    func journalEntries(_ filter: JournalFilter) async throws(ControlInputError) -> (entries: [JournalEntry], dropped: Int) {
        try await stored("journal") { try await mock.journal.entries(filter) }
    }

    public func journalCount(_ filter: JournalFilter = JournalFilter()) async throws(ControlInputError) -> Int {
        try await stored("journal") { try await mock.journal.count(filter) }
    }

    /// Entries the journal holds and their bytes.
    /// The newest sequence number handed out.
    public func journalLastSequence() async throws(ControlInputError) -> Int {
        try await stored("journal") { try await mock.journal.lastSequence() }
    }

    public func journalUsage() async throws(ControlInputError) -> (entries: Int, bytes: Int) {
        try await stored("journal") { try await mock.journal.usage() }
    }

    public func keys() async throws(ControlInputError) -> KeysView {
        let ring = mock.authority.keyRing
        // On a shared store this also installs a rotation made through another replica.
        let now = try await stored { try await mock.authority.now() }
        return KeysView(
            algorithm: ring.algorithm.rawValue,
            keys: ring.listing().filter { $0.retiredUntil.map { $0 > now } ?? true }.map {
                KeysView.Key(kid: $0.id, state: $0.retiredUntil == nil ? "current" : "retired", retiredUntil: $0.retiredUntil)
            })
    }

    /// A new current key; the old one verifies and stays in the JWKS for
    /// `graceSeconds` (default `key_grace`) of the server clock.
    public func rotateKeys(graceSeconds: Double?) async throws(ControlInputError) -> KeysView {
        if mock.learned != nil { throw ControlInputError(.notRotatable, "a proxy signs nothing: the tokens and keys are the upstream backend's") }
        let grace = graceSeconds ?? Double(mock.authority.settings.keyRotationGraceSeconds)
        // The settings' largest number: a grace that no date can end (1e308) listed the year 506713.
        guard grace >= 0, grace <= Double(ServerSetting.largestNumber) else {
            throw ControlInputError(.invalidValue, "graceSeconds must be a number of seconds from 0 to \(ServerSetting.largestNumber), got \(grace)")
        }
        // The keys are kept by the token store (shared by replicas): its failure is a 503.
        let rotated = try await stored { try await mock.authority.rotateKeys(grace: grace) }
        guard rotated != nil else {
            throw ControlInputError(
                .notRotatable, "this server signs with HS256; start it with --signing-alg RS256 or ES256 to rotate published keys")
        }
        return try await keys()
    }

    public func prune() async throws(ControlInputError) -> PruneReport {
        let removed = try await stored { try await mock.authority.prune() }
        return PruneReport(removed: removed, total: try await stored { try await mock.authority.prunedCounts() })
    }

    /// The journal and tokens so far, judged (`--judge`).
    public func verdicts() async throws(ControlInputError) -> TrafficVerdicts {
        guard mock.options.judge, let judge = mock.judge else {
            throw ControlInputError(
                .notJudging, "this server does not judge the traffic: start it with --judge (authmock serve --judge, authmock proxy --judge)")
        }
        let traffic = try await trafficSoFar()
        return judge.verdicts(entries: traffic.entries, tokens: traffic.tokens, endpointPaths: Set(mock.dialect.endpointPaths))
    }

    /// The traffic so far as a time line (SVG): the console's picture.
    public func timeline() async throws(ControlInputError) -> String {
        guard let judge = mock.judge else {
            throw ControlInputError(
                .notJudging, "this server draws no time line: it runs without the suite (authmock serve and authmock proxy draw one)")
        }
        let traffic = try await trafficSoFar()
        return judge.timeline(
            entries: traffic.entries, tokens: traffic.tokens, endpointPaths: Set(mock.dialect.endpointPaths), dialect: mock.dialect.name)
    }

    /// What a judge reads: the whole journal and the tokens.
    private func trafficSoFar() async throws(ControlInputError) -> (entries: [JournalEntry], tokens: TokenSnapshot) {
        let entries = try await journalEntries(JournalFilter()).entries
        // A proxy's judge also reads the logins of tokens their login's bound let go: the journal names them.
        if let learned = mock.learned { return (entries, learned.snapshot(at: mock.clock.now(), forgotten: true)) }
        return (entries, try await tokens())
    }

    /// Requests of these kinds that have arrived, answered or not (a refresh held in flight counts).
    public func arrivals(_ kinds: Set<RouteKind>) -> Int { mock.arrivals.count(kinds) }

    /// The OAuth client a driver signs in as: the first registered one.
    public var client: Client { mock.directory.clients.first ?? Directory.defaultClient }
}

/// A store failure as the control API reports it (503 `store_unavailable`).
private func stored<T>(_ what: String = "token store", _ body: () async throws -> T) async throws(ControlInputError) -> T {
    do {
        return try await body()
    } catch {
        throw ControlInputError(.storeUnavailable, "the \(what) failed: \(error)")
    }
}
