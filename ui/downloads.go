package ui

import (
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// downloadsView is the Downloads screen: one row per job with a progress
// bar, bytes, speed and time left, pause/resume and cancel. Partial
// downloads of an earlier run come back paused; a finished one is added to
// the model panel's list. Every field is owned by the UI goroutine; the
// downloader's events reach it through post.
type downloadsView struct {
	a     *App
	dl    Downloader
	rows  map[string]*jobRow
	order []string // job ids, first seen first

	box     *fyne.Container
	empty   *widget.Label
	clear   *widget.Button
	content fyne.CanvasObject
	// onCount hears the number of unfinished jobs (the tab's title).
	onCount func(active int)
}

func newDownloadsView(a *App, dl Downloader) *downloadsView {
	d := &downloadsView{a: a, dl: dl, rows: map[string]*jobRow{}}
	d.empty = helpLabel("No downloads yet. Find a model in the Discover tab.")
	d.box = container.NewVBox()
	d.clear = widget.NewButtonWithIcon("Clear finished", theme.ContentClearIcon(), d.clearFinished)
	head := container.NewBorder(nil, nil, widget.NewLabelWithStyle("Downloads", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), d.clear,
		helpLabel("Resumed after a dropped connection or a restart; every file is checked against its sha256 before it is used."))
	d.content = container.NewBorder(container.NewPadded(head), nil, nil, nil, container.NewVScroll(container.NewVBox(d.empty, d.box)))
	dl.Watch(func(j DownloadJob) { a.post(func() { d.update(j) }) })
	return d
}

// restore lists the partial downloads an earlier run left, off the UI
// goroutine.
func (d *downloadsView) restore() {
	go func() {
		jobs, err := d.dl.Restore()
		d.a.post(func() {
			for _, j := range jobs {
				d.update(j)
			}
			if err != nil {
				d.a.status.SetMessage("restoring downloads: "+err.Error(), true)
			}
		})
	}()
}

// start begins downloading f.
func (d *downloadsView) start(f RemoteFile) (DownloadJob, error) {
	j, err := d.dl.Start(f)
	if err != nil {
		return j, err
	}
	d.update(j)
	return j, nil
}

// update shows j's latest state; a job that has just finished makes the
// model panel list the library again.
func (d *downloadsView) update(j DownloadJob) {
	r, ok := d.rows[j.ID]
	if !ok {
		r = newJobRow(d, j.ID)
		d.rows[j.ID] = r
		d.order = append(d.order, j.ID)
		d.box.Add(r.content)
	}
	wasDone := r.job.State == JobDone
	r.set(j)
	if j.State == JobDone && !wasDone {
		d.a.models.refresh()
		d.a.status.SetMessage("Downloaded "+j.Name+": it is in the Model tab's list.", false)
	}
	d.refreshCount()
	if d.a.welcome != nil {
		d.a.welcome.jobChanged(j)
	}
}

func (d *downloadsView) refreshCount() {
	active := 0
	for _, r := range d.rows {
		if !r.job.Final() {
			active++
		}
	}
	setVisible(d.empty, len(d.rows) == 0)
	if d.onCount != nil {
		d.onCount(active)
	}
}

// clearFinished removes the rows of done and canceled jobs.
func (d *downloadsView) clearFinished() {
	var keep []string
	for _, id := range d.order {
		r := d.rows[id]
		if r.job.State == JobDone || r.job.State == JobCanceled {
			d.box.Remove(r.content)
			delete(d.rows, id)
			continue
		}
		keep = append(keep, id)
	}
	d.order = keep
	d.refreshCount()
}

func (d *downloadsView) act(what string, f func(string) error, id string) {
	if err := f(id); err != nil {
		d.a.status.SetMessage(what+": "+err.Error(), true)
	}
}

// jobRow is one job: name and state, bar, numbers, error, buttons.
type jobRow struct {
	job     DownloadJob
	name    *widget.Label
	bar     *widget.ProgressBar
	detail  *widget.Label
	errMsg  *widget.Label
	pause   *widget.Button
	cancel  *widget.Button
	content fyne.CanvasObject
}

func newJobRow(d *downloadsView, id string) *jobRow {
	r := &jobRow{name: widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		bar: widget.NewProgressBar(), detail: widget.NewLabel(""), errMsg: widget.NewLabel("")}
	r.name.Truncation = fyne.TextTruncateEllipsis
	r.errMsg.Importance = widget.DangerImportance
	r.errMsg.Wrapping = fyne.TextWrapWord
	r.errMsg.Hide()
	r.bar.TextFormatter = func() string { return fmt.Sprintf("%.0f%%", r.bar.Value*100) }
	r.pause = widget.NewButtonWithIcon("Pause", theme.MediaPauseIcon(), func() {
		if r.job.State == JobPaused || r.job.State == JobFailed {
			d.act("Resuming "+r.job.Name, d.dl.Resume, id)
		} else {
			d.act("Pausing "+r.job.Name, d.dl.Pause, id)
		}
	})
	r.cancel = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), func() { d.act("Cancelling "+r.job.Name, d.dl.Cancel, id) })
	buttons := container.NewHBox(r.pause, r.cancel)
	r.content = container.NewVBox(container.NewBorder(nil, nil, nil, buttons, r.name), r.bar, r.detail, r.errMsg, widget.NewSeparator())
	return r
}

func (r *jobRow) set(j DownloadJob) {
	r.job = j
	r.name.SetText(j.Name + " — " + j.State)
	if j.Total > 0 {
		r.bar.SetValue(float64(j.Done) / float64(j.Total))
	}
	r.detail.SetText(jobDetail(j))
	msg := ""
	if j.State == JobFailed || j.State == JobRetrying {
		msg = j.Err
	}
	setOptional(r.errMsg, msg)
	resumable := j.State == JobPaused || j.State == JobFailed
	if resumable {
		r.pause.SetText("Resume")
		r.pause.SetIcon(theme.MediaPlayIcon())
	} else {
		r.pause.SetText("Pause")
		r.pause.SetIcon(theme.MediaPauseIcon())
	}
	setEnabled(r.pause, j.State != JobDone && j.State != JobCanceled)
	setEnabled(r.cancel, j.State != JobDone && j.State != JobCanceled)
}

// jobDetail is the row's numbers line: bytes, speed, time left; or what
// the job is waiting for.
func jobDetail(j DownloadJob) string {
	bytes := humanBytes(uint64(j.Done))
	if j.Total > 0 {
		bytes += " of " + humanBytes(uint64(j.Total))
	}
	switch j.State {
	case JobRunning:
		parts := []string{bytes}
		if j.Speed > 0 {
			parts = append(parts, humanBytes(uint64(j.Speed))+"/s")
		}
		if j.ETA >= 0 {
			parts = append(parts, humanDuration(j.ETA)+" left")
		}
		if j.File != "" {
			parts = append(parts, j.File)
		}
		return strings.Join(parts, " · ")
	case JobRetrying:
		return fmt.Sprintf("%s · connection problem, retrying in %s (attempt %d)", bytes, humanDuration(j.RetryIn), j.Attempt+1)
	case JobVerifying:
		return bytes + " · checking the sha256 of " + j.File
	case JobQueued:
		return bytes + " · waiting for another download to finish"
	case JobPaused:
		return bytes + " · paused; Resume continues from here"
	case JobDone:
		return humanBytes(uint64(j.Total)) + " · verified; load it from the Model tab"
	case JobCanceled:
		return "canceled; its partial files were deleted"
	}
	return bytes
}

// humanDuration writes a time left: "45s", "3m20s", "1h05m".
func humanDuration(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
