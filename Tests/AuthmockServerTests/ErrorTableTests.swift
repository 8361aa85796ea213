import AuthmockCore
import AuthmockModel
import AuthmockServer
import Foundation
import Testing

struct ErrorTableTests {
    @Test func docsErrorsPageMatchesTheTable() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("docs/errors.md"), encoding: .utf8)
        #expect(page == ErrorTable.markdown(), "docs/errors.md is stale: run `swift run authmock errors > docs/errors.md`")
    }

    @Test func everyRowIsComplete() {
        for row in ErrorTable.all {
            #expect(!row.code.isEmpty && !row.message.isEmpty && !row.when.isEmpty, "\(row)")
            #expect((200...599).contains(row.status), "\(row)")
        }
    }

    /// A dialect answers every situation with a row its own page documents
    /// (the oauth2 dialect in both error styles), so no answer is undocumented.
    @Test(arguments: Dialects.names)
    func everySituationIsAnsweredWithADocumentedRow(profile name: String) throws {
        let documented = Set(try #require(ErrorTable.rows(forDialect: name)))
        var styles = [DialectOptions()]
        if name == "oauth2" { styles[0].oauth2Errors = .rfcLax; styles.append(DialectOptions()) }
        for options in styles {
            let profile = try #require(Dialects.make(name, options: options))
            for situation in Situation.examples {
                let row = profile.answer(to: situation).row
                let isDocumented = documented.contains(row)
                #expect(isDocumented, "\(name) answers \(situation) with the undocumented \(row.profile) row \(row.status) \(row.code)")
            }
        }
    }

    /// The journal judges a 2xx error by its situation: the refusals of a
    /// token at a resource are the `access_refused` group but for
    /// `insufficient_scope`, and the server's own failures are the two
    /// situations a retry may cure.
    @Test func theJournalsSituationListsAreTheServers() {
        let refusals = Set(Situation.examples.filter { $0.group == "access_refused" }.map(\.key)).subtracting(["insufficient_scope"])
        #expect(refusals == JournalEntry.credentialRefusals)
        let keys = Set(Situation.answerKeys.map(\.key))
        #expect(JournalEntry.serverFailures.isSubset(of: keys))
        #expect(JournalEntry.serverFailures == [Situation.storeUnavailable.key, Situation.internalError.key])
    }
}
