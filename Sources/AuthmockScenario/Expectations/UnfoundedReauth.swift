import AuthmockModel
import DriverProtocol

/// `unfounded_reauth`: calls that ended `reauth_required` although the
/// client was never told its refresh token was refused (no refresh answer
/// with a 4xx other than 429 reached it). Judged on what the client knew,
/// not on how its transport got there: a browser that resends a reset
/// refresh and gets the refusal has been told; a client that signs the user
/// out on a transport error or a 503 has not.
struct UnfoundedReauthExpectation: CountingExpectation {
    static let key = "unfounded_reauth"
    static let shape = CountRange.shape
    static let doc =
        "calls that ended `reauth_required` although no refresh answer refusing the refresh token (a 4xx other than 429) ever reached the client: the sign-in screen came from a transport error, a 5xx or nothing. Judges what the client was told, not how its transport got there"
    static let rule = Rules.caseReports
    let range: CountRange

    func judge(_ observation: Observation) -> Judgement {
        let refusals = observation.entries.filter { entry in
            entry.kind == .refresh && entry.refused
        }
        let reauth = observation.calls.filter { $0.outcome == OutcomeKind.reauthRequired.rawValue }
        let unfounded = refusals.isEmpty ? reauth : []
        var message = "expected \(range.of("call")) to end reauth_required with no refusal behind them, \(unfounded.count) did"
        if !unfounded.isEmpty { message += " (no refresh answer refused the refresh token: the sign-in screen came from something else)" }
        return Judgement(
            passed: range.admits(unfounded.count), message: message,
            evidence: observation.lines(observation.refreshes) + unfounded.map { "\($0.call) \($0.requestLine) -> reauth_required" },
            measured: [range.measure("unfounded reauth_required outcomes", saw: unfounded.count)])
    }
}
