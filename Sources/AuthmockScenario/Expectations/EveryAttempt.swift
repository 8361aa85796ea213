import AuthmockFileFormat
import AuthmockModel
/// `every_attempt: {authorization: bearer|present}`: a rule every API request follows.
struct EveryAttemptExpectation: Expectation {
    static let key = "every_attempt"
    static let shape = Shape.object(
        ObjectSpec(
            "every_attempt",
            [
                Field(
                    "authorization", .string(oneOf: Rule.allCases.map(\.rawValue)), required: true,
                    "bearer: `Bearer <token>` on every resource attempt; present: some Authorization")
            ]))
    static let doc =
        "`{authorization: bearer}`: a request reached the API, and every one carries `Authorization: Bearer <token>` (`present`: any Authorization)"
    static let rule = Rules.bearer

    enum Rule: String, Sendable, CaseIterable { case bearer, present }
    let authorization: Rule

    init(authorization: Rule) { self.authorization = authorization }

    init(_ value: SpecValue, checker: SpecChecker) throws(ScenarioError) {
        authorization = value.object?["authorization"]?.string.flatMap(Rule.init) ?? .bearer
    }

    func judge(_ observation: Observation) -> Judgement {
        let attempts = observation.resources
        guard !attempts.isEmpty else { return .nothingToJudge("no request reached the API, so there is nothing to judge") }
        let broken = attempts.filter { authorization == .bearer ? !$0.presentsBearer : !$0.presentsAuthorization }
        return Judgement(
            passed: broken.isEmpty,
            message: authorization == .bearer
                ? "expected `Authorization: Bearer <token>` on every request to the API, \(broken.count) of \(attempts.count) had another scheme or none"
                : "expected an Authorization header on every request to the API, \(broken.count) of \(attempts.count) had none",
            evidence: observation.lines(broken))
    }
}
