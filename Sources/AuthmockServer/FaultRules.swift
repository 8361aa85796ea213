public import AuthmockModel
import Foundation
import HTTPTypes
import Synchronization

extension FaultRuleView {
    init(_ installed: FaultRules.Installed) {
        self.init(id: installed.id, fired: installed.fired, exhausted: installed.exhausted, rule: installed.rule)
    }
}

extension FaultRule.Match {
    func admits(method: String, path: String, kind: RouteKind, headers: HTTPFields) -> Bool {
        if let expected = self.method, expected.uppercased() != method { return false }
        if let prefix = pathPrefix, !path.hasPrefix(prefix) { return false }
        if let kinds, !kinds.contains(kind) { return false }
        if let header {
            guard let name = HTTPField.Name(header.name), let value = headers[name] else { return false }
            if let expected = header.value, expected != value { return false }
        }
        return true
    }
}

/// Installed fault rules. The first rule that matches and still has firings
/// left fires; matching and counting happen under one lock, so `times: 1`
/// fires exactly once however many requests race for it.
public final class FaultRules: Sendable {
    public struct Installed: Sendable, Equatable {
        public var id: Int
        public var rule: FaultRule
        public var fired: Int
        public var exhausted: Bool { rule.times.map { fired >= $0 } ?? false }
    }

    private struct State {
        var rules: [Installed] = []
        var nextID = 1
        /// Requests held so far by each gather rule, when the first and the latest arrived.
        var gathered: [Int: Gathered] = [:]
    }
    private struct Gathered {
        var count = 0
        var first: ContinuousClock.Instant
        var latest: ContinuousClock.Instant
    }
    private let state = Mutex(State())
    /// Rules installed, read without the lock: most servers have none, and
    /// every request asks.
    private let installed = Atomic(0)

    public init() {}

    @discardableResult
    public func add(_ rule: FaultRule) -> Installed {
        state.withLock { state in
            let installed = Installed(id: state.nextID, rule: rule, fired: 0)
            state.nextID += 1
            state.rules.append(installed)
            self.installed.store(state.rules.count, ordering: .releasing)
            return installed
        }
    }

    public func list() -> [Installed] { state.withLock { $0.rules } }

    /// Whether rule `id` is still installed: a hold ends when its rule is removed.
    func holds(_ id: Int) -> Bool { state.withLock { $0.rules.contains { $0.id == id } } }

    /// Holds a request `milliseconds` (a `delay`, a `delay-response`), or
    /// until its rule is removed (`DELETE /_authmock/faults`, a reset):
    /// a test that clears its faults gets its requests back at once.
    /// Returns false when the removal ended the hold early.
    @discardableResult
    func hold(rule id: Int, milliseconds: Int) async throws -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(milliseconds)
        while holds(id) {
            let left = deadline - ContinuousClock.now
            if left <= .zero { return true }
            try await Task.sleep(for: min(left, .milliseconds(20)))
        }
        return false
    }

    /// Removes every rule; returns how many there were.
    @discardableResult
    public func clear() -> Int {
        state.withLock { state in
            defer {
                state.rules = []
                installed.store(0, ordering: .releasing)
            }
            return state.rules.count
        }
    }

    public func reset() {
        state.withLock { state in
            state = State()
            installed.store(0, ordering: .releasing)
        }
    }

    /// Waits until `count` requests have reached gather rule `id`, until no
    /// new one has arrived for `quiet` milliseconds, until `milliseconds`
    /// after the first one arrived, or until the rule is removed. A client that never sends them all at
    /// once (a connection pool smaller than the batch) is held one quiet
    /// period, not until the cap: holding it longer would let tokens issued
    /// meanwhile expire and blame the client for the suite's timing.
    func gather(rule id: Int, count: Int, milliseconds: Int, quiet: Int) async throws {
        let now = ContinuousClock.now
        let first = state.withLock { state in
            var entry = state.gathered[id] ?? Gathered(first: now, latest: now)
            entry.count += 1
            entry.latest = now
            state.gathered[id] = entry
            return entry.first
        }
        let deadline = first + .milliseconds(milliseconds)
        while true {
            let (arrived, latest) = state.withLock { ($0.gathered[id]?.count ?? 0, $0.gathered[id]?.latest ?? now) }
            let clock = ContinuousClock.now
            if arrived >= count || clock >= deadline || clock >= latest + .milliseconds(quiet) || !holds(id) { return }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// The rule that fires for this request, if any, counted as fired.
    /// `excluding`: rules that already acted on it (after a hold).
    func fire(method: String, path: String, kind: RouteKind, headers: HTTPFields, excluding: Set<Int> = []) -> Installed? {
        guard installed.load(ordering: .acquiring) > 0 else { return nil }
        return state.withLock { state in
            for index in state.rules.indices
            where !state.rules[index].exhausted && !excluding.contains(state.rules[index].id)
                && state.rules[index].rule.match.admits(method: method, path: path, kind: kind, headers: headers)
            {
                state.rules[index].fired += 1
                return state.rules[index]
            }
            return nil
        }
    }
}
