#if canImport(XCTest)
    import XCTest

    extension AuthmockCase {
        /// XCTest's entry: runs the case against `client`, and a FAIL or
        /// ERROR fails the test with the case's findings and evidence.
        @discardableResult
        public func assertPasses(_ client: ClientUnderTest, file: StaticString = #filePath, line: UInt = #line) async -> CaseResult {
            let result = await run(against: client)
            if result.verdict == .fail || result.verdict == .error { XCTFail(Self.failureMessage(result), file: file, line: line) }
            return result
        }
    }

    extension AuthmockSuite {
        /// XCTest's entry for many cases in one test method: they run at
        /// once, and each FAIL or ERROR is a failure of its own naming the case.
        @discardableResult
        public static func assertPasses(
            _ cases: [AuthmockCase], against client: ClientUnderTest, file: StaticString = #filePath, line: UInt = #line
        ) async -> [CaseResult] {
            let results = await run(cases, against: client)
            for result in results where result.verdict == .fail || result.verdict == .error {
                XCTFail(AuthmockCase.failureMessage(result), file: file, line: line)
            }
            return results
        }
    }
#endif
