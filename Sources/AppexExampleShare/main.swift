// The example share extension (Share.appex): saves what it is given as a note in its
// container and answers with a summary of what it saved. Built on AppexExtensionKit, no
// Foundation, so it links small and static and starts fast.
import AppexExtensionKit

AppexExtension.main(handler: ShareHandler())
