public import AuthmockCore
public import AuthmockModel

/// Judges what a client did on its own (`--judge`): the suite's
/// expectations over a journal with no scripted step behind it. The suite
/// lives above the server (AuthmockScenario's `TrafficJudge`), so whoever
/// starts a server hands it one (`authmock serve` and `proxy` always do;
/// `--judge`, `ServerOptions.judge`, opens the verdicts to clients).
public protocol TrafficJudging: Sendable {
    /// `endpointPaths`: the dialect's sign-in and refresh paths (they may lie under `/api/`).
    func verdicts(entries: [JournalEntry], tokens: TokenSnapshot, endpointPaths: Set<String>) -> TrafficVerdicts
    /// The traffic as the run report draws a case (SVG), what failed outlined.
    func timeline(entries: [JournalEntry], tokens: TokenSnapshot, endpointPaths: Set<String>, dialect: String) -> String
}
