import AuthmockCore
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
}
