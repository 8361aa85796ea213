import Foundation
import TestSupport
import Testing

/// The fuzz targets' seed corpus (Tests/Fuzz/), and anything a fuzzing run
/// found and was added to it, replayed through the same entry points in a
/// normal build: every input returns (scripts/fuzz.sh does the fuzzing).
struct FuzzCorpusTests {
    @Test(arguments: ["token", "body", "scenario", "graphql"])
    func everyCorpusInputIsHandled(_ target: String) async throws {
        let binary = try authmockBinary().deletingLastPathComponent().appendingPathComponent("authmock-fuzz")
        let corpus = repositoryRoot.appendingPathComponent("Tests/Fuzz/\(target)")
        let count = try FileManager.default.contentsOfDirectory(atPath: corpus.path).count
        #expect(count >= 5, "a seed corpus of a few inputs per target")
        let run = try await runProcess(binary.path, [target, corpus.path])
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("\(target): \(count) inputs replayed"), "\(run.stdout)")
    }
}
