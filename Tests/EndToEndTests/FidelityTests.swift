import Foundation
import TestSupport
import Testing

/// The differential suite (scripts/fidelity.py): the vendor dialects beside
/// the real servers that install here from PyPI (SimpleJWT,
/// django-oauth-toolkit as oauth2 and as Passport's policy, moto's Cognito),
/// the same requests to both, compared on status, error code, member names,
/// challenge and token claims. Any difference docs/fidelity.md does not list
/// with its reason fails, and so does the page going stale.
struct FidelityTests {
    @Test func everyDifferenceFromTheRealServersIsAcceptedWithItsReason() async throws {
        let script = repositoryRoot.appendingPathComponent("scripts/fidelity.py").path
        let page = repositoryRoot.appendingPathComponent("docs/fidelity.md").path
        let run = try await runProcess("python3", [script, "--authmock", try authmockBinary().path, "--check", page])
        #expect(run.status == 0, "\(run.stdout)\(run.stderr.suffix(3000))")
        #expect(run.stdout.contains("every difference is accepted, with its reason"), "\(run.stdout)")
        for vendor in ["simplejwt", "oauth2", "passport", "cognito"] {
            #expect(run.stdout.contains("\(vendor): ") && run.stdout.contains(" 0 unexplained"), "\(vendor) was not compared: \(run.stdout)")
        }
    }
}
