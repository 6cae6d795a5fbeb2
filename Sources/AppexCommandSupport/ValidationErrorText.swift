/// A message for a bad command-line value, shown as it is.
package struct ValidationErrorText: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}
