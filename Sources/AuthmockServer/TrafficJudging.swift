public import AuthmockCore
public import AuthmockModel

/// Judges what a client did on its own (`--judge`): the suite's
/// expectations over a journal with no scripted step behind it. The suite
/// lives above the server (AuthmockScenario's `TrafficJudge`), so whoever
/// starts a judging server hands it one.
public protocol TrafficJudging: Sendable {
    /// `endpointPaths`: the dialect's sign-in and refresh paths (they may lie under `/api/`).
    func verdicts(entries: [JournalEntry], tokens: TokenSnapshot, endpointPaths: Set<String>) -> TrafficVerdicts
}
