import AuthmockModel
/// `refreshes`: refresh requests the server saw. Since verdicts judge
/// necessity (`superfluous_refreshes`), built-in cases use it as a loose
/// loop guard or where the count itself is the point (0 for a 403).
struct RefreshesExpectation: CountingExpectation {
    static let key = "refreshes"
    static let shape = CountRange.shape
    static let doc =
        "refresh requests the server saw (with a refresh `via: resources`, requests presenting the refresh token); a loop guard, or 0 where no refresh is the point"
    static let rule = Rules.caseReports
    let range: CountRange

    func judge(_ observation: Observation) -> Judgement {
        let seen = observation.refreshes
        let reused = RefreshTokenReuseExpectation.reuses(in: observation.entries)
        var message = "expected \(range.of("refresh request")), saw \(seen.count)"
        if !seen.isEmpty { message += ": journal \(observation.seqs(seen))" }
        if !range.admits(seen.count) && !reused.isEmpty {
            message +=
                "; \(reused.count) of them presented an already rotated refresh token"
                + (observation.reuseRevokesLogin ? ", so reuse detection revoked the login" : "")
        }
        return Judgement(
            passed: range.admits(seen.count), message: message, evidence: observation.lines(seen),
            measured: [range.measure("refresh requests", saw: seen.count)], entries: seen.map(\.seq))
    }
}
