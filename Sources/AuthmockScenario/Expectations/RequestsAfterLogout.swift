import AuthmockModel
import Foundation

/// `requests_after_logout`: requests that presented a token (access or
/// refresh) after the app had signed the user out. Revocation requests are
/// the sign-out itself and do not count.
struct RequestsAfterLogoutExpectation: CountingExpectation {
    static let key = "requests_after_logout"
    static let shape = CountRange.shape
    static let doc =
        "requests that presented a token (access or refresh) after the driver confirmed the sign-out of a `logout` step; revocations excepted"
    static let rule = Rules.caseReports
    let range: CountRange

    func judge(_ observation: Observation) -> Judgement {
        guard let signedOut = observation.signedOutAt else {
            return Judgement(passed: false, message: "the case has no logout step, so nothing was signed out", evidence: [])
        }
        let after = observation.entries.filter { entry in
            entry.realTime > signedOut && entry.kind != .revoke && (entry.accessToken != nil || entry.refreshToken != nil)
        }
        return Judgement(
            passed: range.admits(after.count),
            message: "expected \(range.of("request")) with a token after the sign-out, saw \(after.count)"
                + (after.isEmpty ? "" : ": journal \(observation.seqs(after))"),
            evidence: observation.lines(after), measured: [range.measure("requests after the sign-out", saw: after.count)], entries: after.map(\.seq))
    }
}
