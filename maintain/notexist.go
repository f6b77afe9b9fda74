package maintain

import (
	"errors"
	"io/fs"
)

// onlyNotExist reports whether err consists only of failed removes of files
// that do not exist (possibly joined). A failure to write or read a missing
// file is not one: that is a commit that did not happen. iceberg-go's post-commit cleanup after an
// expiry lists the files of the expired snapshots' manifests including
// entries marked DELETED, whose files an earlier expiry already removed, and
// reports each as a failed remove even though the commit went through and
// the file is gone, which is what the cleanup wanted.
func onlyNotExist(err error) bool {
	if err == nil {
		return false
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs := j.Unwrap()
		if len(errs) == 0 {
			return false
		}
		for _, e := range errs {
			if e != nil && !onlyNotExist(e) {
				return false
			}
		}
		return true
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op == "remove" && errors.Is(pe.Err, fs.ErrNotExist)
	}
	return false
}
