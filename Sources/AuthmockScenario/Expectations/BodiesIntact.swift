import AuthmockCore
import AuthmockModel
import Crypto
import Foundation

/// `bodies_intact`: every attempt of a call that has a body carries exactly
/// the bytes the application handed over. A client that cannot replay a
/// one-shot body may fail the call instead; it must never send it empty or
/// cut short.
struct BodiesIntactExpectation: FlagExpectation {
    static let key = "bodies_intact"
    static let doc =
        "every attempt of a call with a body carries exactly the application's bytes; failing the call instead is allowed, an empty or truncated body is not"
    static let rule = Rules.replay
    let required: Bool

    /// Attempts of calls with a body that carried other bytes, and how many attempts were checked.
    static func altered(_ observation: Observation) -> (altered: [JournalEntry], checked: Int) {
        var altered: [JournalEntry] = []
        var checked = 0
        for record in observation.calls {
            guard let body = record.spec.body else { continue }
            let expected = SHA256.hash(data: Data(body.utf8)).hexString
            for attempt in observation.attempts(of: record.call) {
                checked += 1
                if attempt.bodySHA256 != expected || attempt.bodyBytes != body.utf8.count { altered.append(attempt) }
            }
        }
        return (altered, checked)
    }

    func judgeRequired(_ observation: Observation) -> Judgement {
        let (altered, checked) = Self.altered(observation)
        if checked == 0 {
            return .nothingToJudge("no request of a call with a body reached the server, so its body was never checked")
        }
        return Judgement(
            passed: altered.isEmpty,
            message: altered.isEmpty
                ? "all \(checked) attempts carried the application's body byte for byte"
                : "\(altered.count) of \(checked) attempts carried another body than the application's (empty or cut short): journal \(observation.seqs(altered))",
            evidence: observation.lines(altered))
    }
}
