import AuthmockFileFormat
import AuthmockModel
/// `max_requests`: a loop guard over the requests the client makes for the
/// application: sign-in, refresh and API requests (any host). Discovery
/// (metadata) and other housekeeping do not count.
struct MaxRequestsExpectation: Expectation {
    static let key = "max_requests"
    static let shape = Shape.integer(minimum: 1)
    static let doc = "a loop guard over sign-in, refresh and API requests (metadata requests do not count)"
    static let rule = Rules.bounded
    let max: Int

    init(_ value: SpecValue, checker: SpecChecker) throws(ScenarioError) { max = value.integer ?? 1 }

    func judge(_ observation: Observation) -> Judgement {
        let counted = observation.entries.filter { [.login, .refresh, .resource].contains($0.kind) }
        return Judgement(
            passed: counted.count <= max,
            message: "expected at most \(max) sign-in, refresh and API requests in all (a loop guard), saw \(counted.count)",
            evidence: observation.lines(counted),
            measured: [CountRange(min: nil, max: max).measure("sign-in, refresh and API requests", saw: counted.count)],
            entries: counted.count <= max ? [] : counted.suffix(counted.count - max).map(\.seq))
    }
}
