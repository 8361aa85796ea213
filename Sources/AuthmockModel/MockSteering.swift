public import AuthmockCore

/// What a test steers a mock with and reads back, wherever the mock runs:
/// `MockControl` for one in this process, `ControlClient` for one in another
/// (over the control API, docs/control-api.md). One set of operations with
/// one set of answers, so a helper written against it steers either.
public protocol MockSteering: Sendable {
    /// Drops all tokens, families, fault rules and the journal; the clock goes back to real time.
    func reset() async throws
    func clock() async throws -> ClockReading
    /// Moves the virtual clock forward (expiry without waiting).
    func advanceClock(seconds: Double) async throws -> ClockReading
    func setClock(offsetSeconds: Double) async throws -> ClockReading
    func tokens() async throws -> TokenSnapshot
    func expire(_ selector: TokenSelector) async throws -> TokenChange
    func revoke(_ selector: TokenSelector) async throws -> TokenChange
    func keys() async throws -> KeysView
    func rotateKeys(graceSeconds: Double?) async throws -> KeysView
    func faults() async throws -> [FaultRuleView]
    func addFault(_ rule: FaultRule) async throws -> FaultRuleView
    /// How many rules were removed.
    func clearFaults() async throws -> Int
    func journal(_ filter: JournalFilter) async throws -> ControlWire.JournalPage
    func journalCount(_ filter: JournalFilter) async throws -> Int
    /// Requests of `kinds` that have arrived, counted on arrival: one a fault
    /// holds, or one still being answered, counts before the journal has it.
    func arrivals(_ kinds: Set<RouteKind>) async throws -> Int
    func prune() async throws -> PruneReport
    /// The traffic so far, judged (a server started with `--judge`).
    func verdicts() async throws -> TrafficVerdicts
}
