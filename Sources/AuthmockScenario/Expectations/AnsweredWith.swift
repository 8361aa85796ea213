import AuthmockFileFormat
import AuthmockModel
/// `answered_with`: a refusal every call met on the wire, so a case shows it
/// reached its subject: 5.1's "the token lacks the scope" (403 in most
/// dialects), rather than a 401 for credentials the server could not read,
/// which a client that drops `Bearer ` also hands the application as an error.
struct AnsweredWithExpectation: Expectation {
    static let key = "answered_with"
    /// The refusals a case can name; each dialect answers them its own way.
    static let refusals = ["insufficient_scope"]
    static let shape = Shape.string(oneOf: refusals)
    static let doc =
        "a refusal every call met: one of its attempts reached the API and got the dialect's answer (`insufficient_scope`: the token lacks the scope, 403 in most dialects), not another refusal"
    static let rule = Rules.caseReports
    let refusal: String

    init(_ value: SpecValue, checker: SpecChecker) throws(ScenarioError) {
        refusal = value.string ?? Self.refusals[0]
    }

    func judge(_ observation: Observation) -> Judgement {
        guard let answer = observation.refusals[refusal] else {
            return Judgement(passed: false, message: "the server's dialect has no \(refusal) answer to compare with")
        }
        let wanted = "\(answer.status) \(answer.code)"
        func meets(_ entry: JournalEntry) -> Bool { entry.status == answer.status && (entry.errorCode.map { $0 == answer.code } ?? true) }
        let own = observation.calls.filter { !Observation.target(of: $0.spec.path).foreign }
        guard !own.isEmpty else { return .nothingToJudge("no call was made, so none met \(refusal) (\(wanted))") }
        let missed = own.filter { call in !observation.attempts(of: call.call).contains(where: meets) }
        let message =
            missed.isEmpty
            ? "every call met \(refusal) (\(wanted)) on the wire"
            : "expected every call to meet \(refusal) (\(wanted)) on the wire; "
                + missed.prefix(5).map { call in
                    let got = observation.attempts(of: call.call).map { "\($0.status)\($0.errorCode.map { " \($0)" } ?? "")" }
                    return "\(call.call) got \(got.isEmpty ? "no answer from the API" : got.joined(separator: ", "))"
                }.joined(separator: "; ")
        return Judgement(passed: missed.isEmpty, message: message, evidence: observation.lines(missed.flatMap { observation.attempts(of: $0.call) }))
    }
}
