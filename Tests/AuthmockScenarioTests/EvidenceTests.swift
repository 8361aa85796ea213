import AuthmockCore
import AuthmockModel
@testable import AuthmockScenario
import AuthmockServer
import Foundation
import Testing

/// A report's evidence is read after the verdict: a journal that fails then
/// leaves the report shorter, and the report says so instead of showing an
/// empty journal as if the client had sent nothing.
struct EvidenceTests {
    /// A journal that records, then fails every read (a database gone since the verdict).
    final class UnreadableJournal: JournalStore {
        let memory: any JournalStore = MemoryJournal()
        struct Gone: Error, CustomStringConvertible { var description: String { "the journal's database is gone" } }
        func nextSequence() async throws -> Int { try await memory.nextSequence() }
        func append(_ entry: JournalEntry) async { await memory.append(entry) }
        func amend(_ entry: JournalEntry) async { await memory.amend(entry) }
        func entries(_ filter: JournalFilter) async throws -> (entries: [JournalEntry], dropped: Int) { throw Gone() }
        func count(_ filter: JournalFilter) async throws -> Int { throw Gone() }
        func lastSequence() async throws -> Int { try await memory.lastSequence() }
        func usage() async throws -> (entries: Int, bytes: Int) { try await memory.usage() }
        func reset() async throws { try await memory.reset() }
        func discard() async throws { try await memory.discard() }
        var location: String { "unreadable" }
    }

    @Test func anUnreadableJournalIsSaidInTheReport() async throws {
        let mock = try await Authmock(
            options: ServerOptions(host: "127.0.0.1", port: 0), state: ServerState(store: MemoryTokenStore(), journal: UnreadableJournal()))
        var result = CaseResult(
            id: "1.1", name: "a case", profile: "oauth2", level: "must", file: "-", verdict: .pass, findings: [], calls: [], journal: [],
            driverStderr: "", seconds: 0)
        await ScenarioRunner.attachEvidence(mock, calls: [], clearedFaults: [], to: &result, start: Date())
        let notes = result.notes ?? []
        #expect(notes.contains { $0.contains("journal could not be read") && $0.contains("the journal's database is gone") }, "\(notes)")
        #expect(result.journal.isEmpty)
    }

    @Test func aReadableJournalAddsNoNote() async throws {
        let mock = try await Authmock(options: ServerOptions(host: "127.0.0.1", port: 0))
        var result = CaseResult(
            id: "1.1", name: "a case", profile: "oauth2", level: "must", file: "-", verdict: .pass, findings: [], calls: [], journal: [],
            driverStderr: "", seconds: 0)
        await ScenarioRunner.attachEvidence(mock, calls: [], clearedFaults: [], to: &result, start: Date())
        #expect(result.notes == nil)
    }
}
