import AuthmockModel
/// `logins`: sign-in requests the server saw.
struct LoginsExpectation: CountingExpectation {
    static let key = "logins"
    static let shape = CountRange.shape
    static let doc = "sign-in requests the server saw"
    static let rule = Rules.caseReports
    let range: CountRange

    func judge(_ observation: Observation) -> Judgement {
        let seen = observation.entries.filter { $0.kind == .login }
        return Judgement(
            passed: range.admits(seen.count), message: "expected \(range.of("sign-in request")), saw \(seen.count)",
            evidence: observation.lines(seen),
            measured: [range.measure("sign-in requests", saw: seen.count)], entries: seen.map(\.seq))
    }
}
